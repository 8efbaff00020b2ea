// The outbox's and the webhooks' settings (docs/configuration.md), read with the parsers of
// ../setting-parsers.ts; config.ts composes them into Config.outbox.
import { ConfigError, enumSetting, integerSetting } from '../setting-parsers.js';

export interface OutboxConfig {
  /** Mails one node delivers at once, and webhooks, each kind with slots of its own. */
  concurrency: number;
  /** Webhooks one node sends to one endpoint at once: what a slow receiver can hold. */
  endpointConcurrency: number;
  /** The fallback check for due messages (a commit that writes messages wakes the nodes at once). */
  pollMs: number;
  /** How long a node holds a message it took; a node killed while sending frees it after this. */
  leaseMs: number;
  /** First retry after about this long; each later one waits twice as long, up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** A message still failing this long after it was queued (or requeued) is marked failed. */
  retryWindowMs: number;
  /** Delivered and failed messages are removed this long after they finished. */
  retentionMs: number;
  /** Time one webhook POST may take (connect to last byte). */
  webhookTimeoutMs: number;
  /** Endpoints on loopback, private and link-local addresses are allowed (tests, closed networks). */
  webhookAllowPrivate: boolean;
  /** How long a rotated-out endpoint secret still signs, beside the new one. */
  webhookSecretOverlapMs: number;
}

export const OUTBOX_DEFAULTS = {
  OUTBOX_CONCURRENCY: 32,
  OUTBOX_ENDPOINT_CONCURRENCY: 8,
  OUTBOX_POLL_MS: 2000,
  OUTBOX_LEASE_SECONDS: 60,
  OUTBOX_RETRY_BASE_MS: 5000,
  OUTBOX_RETRY_MAX_MS: 3_600_000,
  OUTBOX_RETRY_WINDOW_HOURS: 72,
  OUTBOX_RETENTION_DAYS: 30,
  WEBHOOK_TIMEOUT_MS: 10_000,
  WEBHOOK_SECRET_OVERLAP_HOURS: 24,
} as const;

const HOUR_MS = 3_600_000;

export function outboxSettings(get: (name: string) => string | undefined): OutboxConfig {
  const int = (name: keyof typeof OUTBOX_DEFAULTS, min: number, max: number) =>
    integerSetting(name, get(name), OUTBOX_DEFAULTS[name], min, max);
  const config: OutboxConfig = {
    concurrency: int('OUTBOX_CONCURRENCY', 1, 256),
    endpointConcurrency: int('OUTBOX_ENDPOINT_CONCURRENCY', 1, 256),
    pollMs: int('OUTBOX_POLL_MS', 10, 600_000),
    leaseMs: int('OUTBOX_LEASE_SECONDS', 1, 3600) * 1000,
    retryBaseMs: int('OUTBOX_RETRY_BASE_MS', 1, 3_600_000),
    retryMaxMs: int('OUTBOX_RETRY_MAX_MS', 1, 86_400_000),
    // At least a day of retries (docs/events.md, "Retries").
    retryWindowMs: int('OUTBOX_RETRY_WINDOW_HOURS', 24, 24 * 30) * HOUR_MS,
    retentionMs: int('OUTBOX_RETENTION_DAYS', 1, 3650) * 24 * HOUR_MS,
    webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 100, 300_000),
    webhookAllowPrivate:
      enumSetting(
        'WEBHOOK_ALLOW_PRIVATE',
        get('WEBHOOK_ALLOW_PRIVATE'),
        ['true', 'false'],
        'false',
      ) === 'true',
    webhookSecretOverlapMs: int('WEBHOOK_SECRET_OVERLAP_HOURS', 0, 24 * 30) * HOUR_MS,
  };
  // A send that outlives its lease may be repeated by another node while it still runs.
  if (config.webhookTimeoutMs >= config.leaseMs) {
    throw new ConfigError(
      'WEBHOOK_TIMEOUT_MS',
      `must be shorter than OUTBOX_LEASE_SECONDS (${config.leaseMs / 1000} s), got ${config.webhookTimeoutMs}`,
    );
  }
  if (config.retryMaxMs < config.retryBaseMs) {
    throw new ConfigError(
      'OUTBOX_RETRY_MAX_MS',
      `must be at least OUTBOX_RETRY_BASE_MS (${config.retryBaseMs}), got ${config.retryMaxMs}`,
    );
  }
  return config;
}
