// When a failed delivery is tried again (docs/events.md "Retries"): exponential backoff with
// jitter. Attempt n is followed, after a failure, by a wait drawn evenly between half and all of
// min(OUTBOX_RETRY_MAX_MS, OUTBOX_RETRY_BASE_MS × 2^(n−1)), so receivers coming back after an
// outage are not met by every node at once; a message whose next attempt would fall past its
// retry window (OUTBOX_RETRY_WINDOW_HOURS from when it was queued, or requeued by redeliver) is
// marked failed instead.
import type { OutboxConfig } from './settings.js';

/** The wait after the `attempt`-th attempt failed (attempt ≥ 1). */
export function retryDelayMs(
  config: Pick<OutboxConfig, 'retryBaseMs' | 'retryMaxMs'>,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(config.retryMaxMs, config.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** The next attempt's time, or undefined when it would fall past the retry window. */
export function nextAttemptAt(
  config: Pick<OutboxConfig, 'retryBaseMs' | 'retryMaxMs' | 'retryWindowMs'>,
  attempt: number,
  retriesSince: Date,
  now: Date,
  random?: () => number,
): Date | undefined {
  const at = new Date(now.getTime() + retryDelayMs(config, attempt, random));
  return at.getTime() - retriesSince.getTime() > config.retryWindowMs ? undefined : at;
}
