// One webhook attempt (Standard Webhooks 1.0, docs/events.md): a POST of the message's body with
// `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of
// `id.timestamp.body` under each signing secret, space-separated), through undici's `request`
// with a time limit: a fetch costs about three times its CPU (docs/performance.md), and a
// delivery needs nothing of fetch's. Redirects are not followed. Unless private addresses are allowed, the address undici
// connects to is checked as it is resolved, so DNS cannot steer a delivery to an inner host.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { hostOf, isPublicAddress } from '../domain/webhook-urls.js';

export interface WebhookAttempt {
  url: string;
  /** The message id: the same on every attempt. */
  messageId: string;
  body: string;
  /** `whsec_…` secrets, current first. */
  secrets: readonly string[];
  now: Date;
}

export type WebhookResult = { ok: true; status: number } | { ok: false; error: string };

/** Signing keys by secret: an HMAC keyed by bytes checks and copies them each time (14 µs, not 2). */
const signingKeys = new Map<string, KeyObject>();
/** Endpoints' secrets kept at most. */
const MAX_SIGNING_KEYS = 1000;

/** The secret's key, from the map if there (the map keeps the last used at its end). */
function signingKey(secret: string): KeyObject {
  let key = signingKeys.get(secret);
  if (key) {
    signingKeys.delete(secret);
  } else {
    key = createSecretKey(Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
    // The least recently used goes: a rotated or removed endpoint's secret, in time.
    if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.delete(signingKeys.keys().next().value!);
  }
  signingKeys.set(secret, key);
  return key;
}

/** The `webhook-signature` value: one `v1,` signature per secret, space-separated. */
export function signatureHeader(
  secrets: readonly string[],
  messageId: string,
  timestamp: number,
  body: string,
): string {
  return secrets
    .map((secret) => {
      const mac = createHmac('sha256', signingKey(secret));
      mac.update(`${messageId}.${timestamp}.${body}`, 'utf8');
      return `v1,${mac.digest('base64')}`;
    })
    .join(' ');
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** dns.lookup that refuses a name with any address off the public internet. */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback) {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const inner = addresses.find((a) => !isPublicAddress(a.address));
    if (inner || addresses.length === 0) {
      const refused = Object.assign(
        new Error(
          `${hostname} resolves to ${inner?.address ?? 'nothing'}, not a public address (WEBHOOK_ALLOW_PRIVATE is off)`,
        ),
        { code: 'EADDRNOTPUBLIC' },
      );
      return callback(refused, []);
    }
    if (options.all) return callback(null, addresses);
    return callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

/** The text of a failed attempt: the time limit, or the connection's own error. */
export function describeFailure(error: unknown): string {
  // A name with several addresses that all refused fails with one error per address, under an
  // AggregateError whose message is empty: the first says why.
  const e = (
    error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error
  ) as {
    name?: string;
    code?: string;
    message?: string;
  };
  if (e?.name === 'TimeoutError') return 'timed out';
  const message = e?.message || e?.name || String(error);
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: { timeoutMs: number; allowPrivate: boolean }) {
    this.agent = new Agent({
      connect: options.allowPrivate ? {} : { lookup: publicOnlyLookup },
      connectTimeout: options.timeoutMs,
    });
  }

  async send(attempt: WebhookAttempt): Promise<WebhookResult> {
    const url = new URL(attempt.url);
    // A literal address is connected to without a lookup: judge it here.
    const host = hostOf(url);
    if (!this.options.allowPrivate && isIP(host) && !isPublicAddress(host))
      return { ok: false, error: `${host} is not a public address (WEBHOOK_ALLOW_PRIVATE is off)` };
    if (attempt.secrets.length === 0)
      return { ok: false, error: 'the endpoint secret does not open under this server key' };
    const timestamp = Math.floor(attempt.now.getTime() / 1000);
    try {
      const response = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'PalWorkflowServices-Webhooks/1',
          'webhook-id': attempt.messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(
            attempt.secrets,
            attempt.messageId,
            timestamp,
            attempt.body,
          ),
        },
        body: attempt.body,
      });
      // The answer's body means nothing to us: read a little of it at most, and free the
      // connection.
      await response.body.dump().catch(() => {});
      if (response.statusCode >= 200 && response.statusCode < 300)
        return { ok: true, status: response.statusCode };
      return { ok: false, error: `HTTP ${response.statusCode}` };
    } catch (error) {
      return { ok: false, error: describeFailure(error) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
