// The T5 load of the bench sections: an entry token issued over the API (T5) and redeemed over
// HTTP (GET /enter, answered 303), `connections` pairs at a time, each on a transaction in turn.

export interface T5Target {
  url: string;
  auth: string;
  sso: string;
  transactions: readonly string[];
}

/** Pairs completed, and over how many seconds, until `durationS` has passed. */
export async function t5Pairs(
  target: T5Target,
  connections: number,
  durationS: number,
): Promise<{ pairs: number; seconds: number }> {
  let pairs = 0;
  let n = 0;
  const started = performance.now();
  const until = started + durationS * 1000;
  const pair = async () => {
    while (performance.now() < until) {
      const transaction = target.transactions[n++ % target.transactions.length];
      const issued = await fetch(`${target.url}/services/rest/transactions/${transaction}/token`, {
        method: 'POST',
        headers: {
          authorization: target.auth,
          accept: 'text/plain',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: `userSSO=${target.sso}`,
      });
      const token = await issued.text();
      const entered = await fetch(`${target.url}/services/enter/${token}`, { redirect: 'manual' });
      await entered.arrayBuffer();
      if (issued.status !== 200 || entered.status !== 303)
        throw new Error(`token ${issued.status}, entry ${entered.status}`);
      pairs++;
    }
  };
  await Promise.all(Array.from({ length: connections }, pair));
  return { pairs, seconds: (performance.now() - started) / 1000 };
}
