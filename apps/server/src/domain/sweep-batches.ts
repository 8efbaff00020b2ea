// The periodic sweeps remove (or move) what is past its time a batch at a time, each batch a
// statement and a commit of its own. On SQLite a statement runs on the event loop: one statement
// over 60,000 spent entry tokens held it for 160 ms (a batch: 22 ms at most), and an hour of
// delivered webhooks at a hundred a second is 360,000 rows (docs/performance.md). Between
// batches the event loop serves requests, so a large backlog costs time, not a stall.

/** Rows per batch: a few milliseconds of SQLite's time. */
export const SWEEP_BATCH = 1000;

/**
 * What a timer calls for a periodic sweep: `round`, unless the last round is still under way (a
 * large backlog takes longer than the period); then this one passes.
 */
export function oneRoundAtATime(round: () => Promise<unknown>): () => void {
  let running = false;
  return () => {
    if (running) return;
    running = true;
    void round().finally(() => (running = false));
  };
}

/** Runs `batch` with SWEEP_BATCH until one does less than that; the total it did. */
export async function inSweepBatches(batch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const done = await batch(SWEEP_BATCH);
    total += done;
    if (done < SWEEP_BATCH) return total;
  }
}
