// The shared counts on PostgreSQL, one upsert at a time per key (docs/decisions.md, "Rate limits").
// A request whose key has no upsert on its way sends its own at once; requests that arrive while
// one is on its way wait, and go together in the next: one upsert of n points, as group commit
// gathers writes. Every answer still stands on the shared count after its own request, so the
// nodes' sum is exact; under load a key costs one round trip at a time instead of one a request.
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { deferred, type Deferred } from '../storage/deferred.js';

/** A key's count in its window, as one request's answer tells it. */
export interface Counted {
  remaining: number;
  msBeforeNext: number;
  over: boolean;
}

/** What the library answered for a batch: its result, and whether it refused it. */
interface Consumed {
  result: RateLimiterRes;
  refused: boolean;
}

interface Batch {
  size: number;
  readonly consumed: Deferred<Consumed>;
}

interface KeyLine {
  sending: boolean;
  /** The requests that wait for the upsert on its way to end. */
  next: Batch | undefined;
}

export class BatchedConsumer {
  private readonly lines = new Map<string, KeyLine>();
  private upserts = 0;

  /** Upserts sent so far (what batching saves is visible in tests). */
  get sent(): number {
    return this.upserts;
  }

  /** Keys with an upsert on its way; none once every request is answered. */
  get busyKeys(): number {
    return this.lines.size;
  }

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly points: number,
  ) {}

  /** Counts one request of `key`; resolves to where it stands, rejects on a fault of the store. */
  consume(key: string): Promise<Counted> {
    let line = this.lines.get(key);
    if (line === undefined) this.lines.set(key, (line = { sending: false, next: undefined }));
    const batch = (line.next ??= { size: 0, consumed: deferred<Consumed>() });
    const position = ++batch.size;
    if (!line.sending) this.send(key, line);
    return batch.consumed.promise.then((consumed) =>
      standing(consumed, batch.size, position, this.points),
    );
  }

  private send(key: string, line: KeyLine): void {
    const batch = line.next!;
    line.next = undefined;
    line.sending = true;
    this.upserts += 1;
    let consumed: Promise<RateLimiterRes>;
    try {
      consumed = this.limiter.consume(key, batch.size);
    } catch (error) {
      // Not the library's way (it rejects), but a throw must not leave the key's line sending.
      consumed = Promise.reject(error);
    }
    consumed
      .then(
        (result) => batch.consumed.resolve({ result, refused: false }),
        (error: unknown) =>
          // The library rejects with the count when the limit is passed; anything else is a fault.
          error instanceof RateLimiterRes
            ? batch.consumed.resolve({ result: error, refused: true })
            : batch.consumed.reject(error),
      )
      .finally(() => {
        line.sending = false;
        if (line.next) this.send(key, line);
        else this.lines.delete(key);
      });
  }
}

/**
 * The standing of the `position`th of a batch of `size`: the count after the batch, less the
 * requests behind it. A key refused from the library's memory (over until its window ends) comes
 * with no count: every request of the batch is over.
 */
function standing(
  { result, refused }: Consumed,
  size: number,
  position: number,
  points: number,
): Counted {
  if (refused && result.consumedPoints === 0)
    return { remaining: 0, msBeforeNext: result.msBeforeNext, over: true };
  const count = result.consumedPoints - size + position;
  return {
    remaining: Math.max(0, points - count),
    msBeforeNext: result.msBeforeNext,
    over: count > points,
  };
}
