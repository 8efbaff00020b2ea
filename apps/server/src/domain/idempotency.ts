// Idempotency keys (IETF draft-ietf-httpapi-idempotency-key-header; docs/events.md):
// the first request of an API client with a key claims it and does the work; the same request
// again within 24 hours gets the first answer; another request with the key is refused; the same
// request while the first is still being served waits for its answer, boundedly.
//
// The claim is one INSERT that only one request can win, on any number of nodes (the primary key
// of idempotency_keys). A claim holds a lease: a node that dies while serving leaves a key that
// answers 409 until the lease ends, then the next request with it does the work.
import type { Config } from '../config.js';
import type { DomainContext } from './context.js';
import { randomId } from './ids.js';
import {
  claimIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  releaseIdempotencyKey,
  storeIdempotentAnswer,
} from '../storage/idempotency-keys.js';
import { inSweepBatches } from './sweep-batches.js';

/** How long a key and its answer are kept (DESIGN: 24 hours). */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

/**
 * How long a claim without an answer keeps the key from others: longer than a request may take
 * (a run and its repeats after conflicting writes, each under WORKFLOW_TIMEOUT_MS, plus queueing),
 * so that a slow request is never served twice; what a dead node's key costs is this long a wait.
 */
export function idempotencyLeaseMs(config: Pick<Config, 'workflowTimeoutMs'>): number {
  return 5 * 60_000 + 5 * config.workflowTimeoutMs;
}

/**
 * How long the same request waits for the first one's answer before it gets 409: as long as a
 * run may take and a little more, so that concurrent duplicates of a quick request all get its
 * answer, while a client is not kept waiting long on a slow one.
 */
export function idempotencyWaitMs(config: Pick<Config, 'workflowTimeoutMs'>): number {
  return config.workflowTimeoutMs + 2_000;
}

/** Polling for an answer another node is producing: from this, growing to the maximum. */
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 250;

export interface IdempotentAnswer {
  status: number;
  contentType: string | null;
  body: string;
}

export type KeyClaim =
  /** This request does the work, and then stores its answer with `owner`. */
  | { kind: 'claimed'; owner: string }
  /** The first request's answer: send it as it is. */
  | { kind: 'answered'; answer: IdempotentAnswer }
  /** The key was used with another request (422). */
  | { kind: 'mismatch' }
  /** The first request is still being served (409, retry after `retryAfterSeconds`). */
  | { kind: 'busy'; retryAfterSeconds: number };

/** Requests of this process waiting for a key another request of this process is serving. */
const waiters = new Map<string, Set<() => void>>();

function waiterKey(clientId: string, key: string): string {
  return `${clientId}\u0000${key}`;
}

function wake(clientId: string, key: string): void {
  const name = waiterKey(clientId, key);
  const set = waiters.get(name);
  waiters.delete(name);
  for (const resolve of set ?? []) resolve();
}

/** Resolves when this process finishes the key, or after `ms` (another node may finish it). */
function nextLook(clientId: string, key: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const name = waiterKey(clientId, key);
    let set = waiters.get(name);
    if (!set) waiters.set(name, (set = new Set()));
    const done = () => {
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0 && waiters.get(name) === set) waiters.delete(name);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
  });
}

/**
 * Claims the key for this request, or says what to answer instead. `fingerprint` is what makes a
 * request the same request (http/idempotency.ts).
 */
export async function claimIdempotencyKeyFor(
  ctx: DomainContext,
  clientId: string,
  key: string,
  fingerprint: string,
): Promise<KeyClaim> {
  const deadline = performance.now() + idempotencyWaitMs(ctx.config);
  let poll = POLL_FIRST_MS;
  for (;;) {
    const now = ctx.now();
    const owner = randomId();
    const won = await claimIdempotencyKey(
      ctx.db,
      {
        client_id: clientId,
        idempotency_key: key,
        fingerprint,
        owner,
        locked_until: new Date(now.getTime() + idempotencyLeaseMs(ctx.config)).toISOString(),
        status: null,
        content_type: null,
        body: null,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS).toISOString(),
      },
      now.toISOString(),
    );
    if (won) return { kind: 'claimed', owner };
    const row = await findIdempotencyKey(ctx.db, clientId, key);
    // Gone between the claim and the look (its request failed and gave it up): claim again.
    if (!row) continue;
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.status !== null)
      return {
        kind: 'answered',
        answer: { status: row.status, contentType: row.content_type, body: row.body ?? '' },
      };
    const left = deadline - performance.now();
    if (left <= 0) return { kind: 'busy', retryAfterSeconds: 1 };
    await nextLook(clientId, key, Math.min(poll, left));
    poll = Math.min(poll * 2, POLL_MAX_MS);
  }
}

/** Stores the answer of the request that claimed the key, and wakes those waiting for it. */
export async function storeIdempotentAnswerFor(
  ctx: DomainContext,
  clientId: string,
  key: string,
  owner: string,
  answer: IdempotentAnswer,
): Promise<void> {
  try {
    const stored = await storeIdempotentAnswer(ctx.db, clientId, key, owner, answer);
    if (!stored)
      ctx.log.warn({ clientId }, 'an idempotency key was taken over before its answer was stored');
  } finally {
    wake(clientId, key);
  }
}

/** Gives the key up (its request ended in a server fault): the next request does the work. */
export async function releaseIdempotencyKeyFor(
  ctx: DomainContext,
  clientId: string,
  key: string,
  owner: string,
): Promise<void> {
  try {
    await releaseIdempotencyKey(ctx.db, clientId, key, owner);
  } finally {
    wake(clientId, key);
  }
}

/** Removes keys older than 24 hours; how many. Part of the server's sweep. */
export function sweepIdempotencyKeys(ctx: DomainContext): Promise<number> {
  const now = ctx.now().toISOString();
  return inSweepBatches((limit) => deleteExpiredIdempotencyKeys(ctx.db, now, limit));
}
