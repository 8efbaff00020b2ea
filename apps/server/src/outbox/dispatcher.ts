// The outbox dispatcher of one node (docs/events.md): takes due messages from outbox_messages
// under a lease, delivers them (mails through the mailer, webhooks through WebhookSender) and
// records each outcome: delivered, tried again later with backoff, or failed. A commit that
// wrote messages wakes it at once (storage dialect: announceOutbox / listenOutbox); it also looks
// for due messages every OUTBOX_POLL_MS and when a retry falls due. Several nodes share the work
// (each message is held by one node at a time); a node killed mid-send frees its messages when
// their lease runs out, and another node (or the same one, restarted) sends them again: at least
// once, never lost.
//
// A node serves its messages in lanes, each with slots of its own: mails, completion jobs, and
// the webhooks of each endpoint. A receiver that answers slowly, or not at all, holds at most
// OUTBOX_ENDPOINT_CONCURRENCY slots of this node; other endpoints, and mail, go on meanwhile.
import { runCompletionJob } from '../domain/completed-documents.js';
import type { DomainContext } from '../domain/context.js';
import { randomId } from '../domain/ids.js';
import { openQueuedMail } from '../domain/queued-mail.js';
import { inSweepBatches, oneRoundAtATime } from '../domain/sweep-batches.js';
import { signingSecrets } from '../domain/webhooks.js';
import { dialectOf } from '../storage/adapter-dialect.js';
import {
  claimDueMessages,
  countDueMessages,
  deleteFinishedMessages,
  extendLease,
  laneHeads,
  recordAttempt,
  type AttemptOutcome,
  type LaneHead,
  type OutboxLane,
  type OutboxMessageRow,
} from '../storage/outbox-messages.js';
import type { Db } from '../storage/database.js';
import type { IsoDate, OutboxKind } from '../storage/schema.js';
import { findWebhookEndpoint } from '../storage/webhook-endpoints.js';
import { nextAttemptAt } from './backoff.js';
import { WebhookSender } from './webhook-sender.js';

/** The shortest wait before the next look for due messages (another node may hold them). */
const MIN_WAIT_MS = 10;
/** How often finished messages past OUTBOX_RETENTION_DAYS are removed. */
const RETENTION_SWEEP_MS = 3_600_000;
/**
 * How long an attempt may keep its message's lease by renewing it. Past this, the lease lapses,
 * and the message is another node's to send again: a mail server that trickles bytes holds a
 * message no longer than this.
 */
const MAX_HOLD_MS = 600_000;
/** Longest error text kept with a message. */
const MAX_ERROR_LENGTH = 500;
/**
 * Completion jobs of one node at a time: each writes PDFs in a worker thread of up to
 * COMPLETION_LIMITS' memory, and one waiting for another would hold its lease meanwhile.
 */
const COMPLETION_SLOTS = 1;

const MAIL_LANE: OutboxLane = { kind: 'mail', endpointId: null };
const COMPLETION_LANE: OutboxLane = { kind: 'completion', endpointId: null };

/** The endpoints with webhooks due at `now`, the one waiting longest first. */
function dueEndpoints(heads: readonly LaneHead[], now: IsoDate): string[] {
  return heads
    .filter((head) => head.kind === 'webhook' && head.due !== null && head.due <= now)
    .sort((a, b) => (a.due! < b.due! ? -1 : a.due! > b.due! ? 1 : 0))
    .map((head) => head.endpointId!);
}

/** The key of a message's lane in the dispatcher's counts of deliveries under way. */
function laneKey(message: Pick<OutboxMessageRow, 'kind' | 'endpoint_id'>): string {
  return message.kind === 'webhook' ? `webhook ${message.endpoint_id}` : message.kind;
}

type Attempt = { ok: true } | { ok: false; error: string; permanent?: boolean };

export class OutboxDispatcher {
  /** What this node's attempts came to since it started (recorded outcomes only). */
  readonly counts = { delivered: 0, retried: 0, failed: 0 };
  private readonly inFlight = new Set<Promise<void>>();
  /** Deliveries under way, per lane (laneKey) and per kind. */
  private readonly laneLoad = new Map<string, number>();
  private readonly kindLoad = { mail: 0, completion: 0, webhook: 0 };
  private readonly outcomes: {
    id: string;
    claim: string;
    outcome: AttemptOutcome;
    resolve: (recorded: boolean) => void;
    reject: (error: unknown) => void;
  }[] = [];
  private readonly sender: WebhookSender;
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (Date.now() time). */
  private timerAt = Infinity;
  private sweepTimer: NodeJS.Timeout | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private pumping = false;
  /** Every lane is to be looked at (a commit wrote messages, a timer, the start). */
  private lookEverywhere = false;
  /** Lanes whose slots freed since the last round: only they, and whom they made room for. */
  private readonly freed = new Map<string, OutboxLane>();
  /** The last round left endpoints with due webhooks for want of webhook slots in all. */
  private webhooksWaiting = false;
  private stopped = false;

  constructor(private readonly ctx: DomainContext) {
    this.sender = new WebhookSender({
      timeoutMs: ctx.config.outbox.webhookTimeoutMs,
      allowPrivate: ctx.config.outbox.webhookAllowPrivate,
    });
  }

  private get config() {
    return this.ctx.config.outbox;
  }

  /** Starts listening for new messages and delivers what is due already. */
  async start(): Promise<void> {
    this.stopListening = await dialectOf(this.ctx.db).listenOutbox(this.ctx.db, () => this.wake());
    this.sweepTimer = setInterval(
      oneRoundAtATime(() => this.sweep()),
      RETENTION_SWEEP_MS,
    );
    this.sweepTimer.unref();
    this.wake();
  }

  /** Looks for due messages now, in every lane. */
  wake(): void {
    this.lookEverywhere = true;
    void this.pump();
  }

  /** Takes no more messages and waits for the deliveries under way (each ends by its timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.sweepTimer);
    await this.stopListening?.();
    while (this.pumping || this.inFlight.size > 0) {
      await Promise.allSettled([...this.inFlight]);
      if (this.pumping) await new Promise((done) => setTimeout(done, MIN_WAIT_MS));
    }
    await this.sender.close();
  }

  /**
   * Resolves once nothing is due and nothing is under way: what is due has been delivered or
   * scheduled for a retry. For tests and the CLI; the running service never needs it.
   */
  async drain(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await Promise.allSettled([...this.inFlight]);
      const due = await countDueMessages(this.ctx.db, this.ctx.now().toISOString());
      if (due === 0 && this.inFlight.size === 0 && !this.pumping) return;
      if (Date.now() > deadline)
        throw new Error(
          due > 0
            ? `the outbox still has ${due} due messages`
            : 'the outbox still has deliveries under way',
        );
      // Woken only for what is due: a wake for nothing keeps the dispatcher looking, and with
      // many callers at once (the harness drains after every answer) one of them always did,
      // so none ever found it idle.
      if (due > 0) this.wake();
      await new Promise((done) => setTimeout(done, MIN_WAIT_MS));
    }
  }

  private async pump(): Promise<void> {
    if (this.stopped) return;
    if (this.pumping) return; // the loop below sees what came meanwhile
    this.pumping = true;
    try {
      // A round takes the due messages of the lanes it looks at, up to each lane's room: a lane
      // left with room has nothing more due, and a full one is looked at again as each of its
      // attempts ends. Another round only for what came meanwhile.
      let lookedEverywhere = false;
      while ((this.lookEverywhere || this.freed.size > 0) && !this.stopped) {
        const everywhere = this.lookEverywhere;
        const freed = [...this.freed.values()];
        this.lookEverywhere = false;
        this.freed.clear();
        lookedEverywhere ||= everywhere;
        for (const message of await this.claimRound(everywhere ? 'all' : freed))
          this.track(message);
      }
      // A round of freed slots alone leaves the timer as it was.
      if (lookedEverywhere) await this.scheduleNext();
    } catch (error) {
      // The database is away: look again after the poll interval.
      this.ctx.log.error({ err: error }, 'outbox: could not take due messages');
      this.schedule(this.config.pollMs);
    } finally {
      this.pumping = false;
    }
    // Woken while it looked for the next due time: look again now.
    if ((this.lookEverywhere || this.freed.size > 0) && !this.stopped) void this.pump();
  }

  /**
   * Claims what the lanes looked at have due, up to each one's room: every lane (mails, a
   * completion job, then the webhooks of each endpoint, the one waiting longest first, until the
   * webhook slots are taken), or only those whose slots freed. Several statements go in one
   * database transaction: one commit.
   */
  private claimRound(lanes: 'all' | OutboxLane[]): Promise<OutboxMessageRow[]> {
    const { leaseMs } = this.config;
    const now = this.ctx.now();
    const options = {
      claim: randomId(),
      now: now.toISOString() as IsoDate,
      leaseUntil: new Date(now.getTime() + leaseMs).toISOString() as IsoDate,
    };
    const all = lanes === 'all';
    const looks = (kind: OutboxKind) => all || lanes.some((lane) => lane.kind === kind);
    const freedEndpoints = all
      ? []
      : lanes.flatMap((lane) => (lane.kind === 'webhook' ? [lane.endpointId!] : []));
    // A freed webhook slot makes room for whoever waited for one, not only its own endpoint.
    const walk = all || (this.webhooksWaiting && freedEndpoints.length > 0);
    const round = async (db: Db) => {
      const claimed: OutboxMessageRow[] = [];
      const take = async (lane: OutboxLane, limit: number) => {
        if (limit <= 0) return 0;
        const rows = await claimDueMessages(db, { ...options, limit, lane });
        claimed.push(...rows);
        return rows.length;
      };
      if (looks('mail')) await take(MAIL_LANE, this.kindRoom('mail'));
      if (looks('completion')) await take(COMPLETION_LANE, this.kindRoom('completion'));
      if (!walk && freedEndpoints.length === 0) return claimed;
      let room = this.kindRoom('webhook');
      const endpoints = walk ? dueEndpoints(await laneHeads(db), options.now) : freedEndpoints;
      // Whether an endpoint got fewer than its own slots allow because the webhook slots ran out:
      // then the next freed webhook slot, whoever's, looks at every endpoint again.
      let waiting = false;
      for (const endpointId of endpoints) {
        const own = this.endpointRoom(endpointId);
        if (own <= 0) continue;
        if (room < own) waiting = true;
        if (room <= 0) break;
        room -= await take({ kind: 'webhook', endpointId }, Math.min(room, own));
      }
      this.webhooksWaiting = waiting;
      return claimed;
    };
    const oneStatement = !walk && lanes.length === 1;
    return oneStatement ? round(this.ctx.db) : this.ctx.db.transaction().execute(round);
  }

  /** Free slots of a kind: mails, completion jobs, or webhooks in all. */
  private kindRoom(kind: OutboxKind): number {
    const slots = kind === 'completion' ? COMPLETION_SLOTS : this.config.concurrency;
    return slots - this.kindLoad[kind];
  }

  /** Free slots of one endpoint's own (besides the webhook slots in all). */
  private endpointRoom(endpointId: string): number {
    const load = this.laneLoad.get(laneKey({ kind: 'webhook', endpoint_id: endpointId })) ?? 0;
    return this.config.endpointConcurrency - load;
  }

  /**
   * Delivers `message` in a slot of its lane, and records the outcome. The slot frees (and the
   * node looks for more) when the attempt ends: the record's commit, which the message's claim
   * covers meanwhile, holds no receiver's or mail server's connection.
   */
  private track(message: OutboxMessageRow): void {
    const lane = laneKey(message);
    const kind = message.kind;
    this.laneLoad.set(lane, (this.laneLoad.get(lane) ?? 0) + 1);
    this.kindLoad[kind] += 1;
    const attempt = this.holdingLease(message, this.attempt(message));
    const delivery = attempt.then((result) => this.settle(message, result));
    this.inFlight.add(delivery);
    void attempt.then(() => {
      const load = this.laneLoad.get(lane)! - 1;
      if (load === 0) this.laneLoad.delete(lane);
      else this.laneLoad.set(lane, load);
      this.kindLoad[kind] -= 1;
      this.freed.set(lane, { kind, endpointId: message.endpoint_id });
      void this.pump();
    });
    void delivery
      .catch((error: unknown) => this.ctx.log.error({ err: error }, 'outbox: an attempt failed'))
      .finally(() => this.inFlight.delete(delivery));
  }

  /**
   * A timer for the next due message (a retry, a lapsed lease) of a lane with a free slot, at most
   * OUTBOX_POLL_MS away. A full lane needs none: each of its attempts, as it ends, looks again.
   */
  private async scheduleNext(): Promise<void> {
    const free = (head: LaneHead) =>
      this.kindRoom(head.kind) > 0 &&
      (head.kind !== 'webhook' || this.endpointRoom(head.endpointId!) > 0);
    const next = Math.min(
      ...(await laneHeads(this.ctx.db))
        .filter((head) => head.due !== null && free(head))
        .map((head) => Date.parse(head.due!)),
    );
    this.schedule(Math.min(this.config.pollMs, next - this.ctx.now().getTime()));
  }

  private schedule(waitMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    const wait = Math.max(MIN_WAIT_MS, waitMs);
    this.timerAt = Date.now() + wait;
    this.timer = setTimeout(() => {
      this.timerAt = Infinity;
      this.wake();
    }, wait);
    this.timer.unref();
  }

  /**
   * Renews the message's lease while `work` runs past a third of it (a slow mail server, a long
   * completion job), for up to MAX_HOLD_MS. Unrenewed, the lease ran out while the send still
   * went on, and this node or another sent the mail again, once a lease for as long as the server
   * stayed slow.
   */
  private holdingLease<T>(message: OutboxMessageRow, work: Promise<T>): Promise<T> {
    const { leaseMs } = this.config;
    const started = Date.now();
    const renew = setInterval(() => {
      if (Date.now() - started >= MAX_HOLD_MS) return clearInterval(renew);
      const until = new Date(this.ctx.now().getTime() + leaseMs).toISOString() as IsoDate;
      extendLease(this.ctx.db, message.id, message.claim!, until).then(
        (held) => {
          if (!held) clearInterval(renew);
        },
        (error: unknown) =>
          this.ctx.log.warn({ err: error, messageId: message.id }, 'outbox: lease not renewed'),
      );
    }, leaseMs / 3);
    renew.unref();
    return work.finally(() => clearInterval(renew));
  }

  /** One attempt at sending `message` (never rejects: a fault is a failed attempt). */
  private async attempt(message: OutboxMessageRow): Promise<Attempt> {
    try {
      return message.kind === 'mail'
        ? await this.sendMail(message)
        : message.kind === 'completion'
          ? await this.complete(message)
          : await this.sendWebhook(message);
    } catch (error) {
      return { ok: false, error: (error as Error)?.message ?? String(error) };
    }
  }

  /** Records an attempt's outcome while the claim holds, and logs it. */
  private async settle(message: OutboxMessageRow, attempt: Attempt): Promise<void> {
    const { log } = this.ctx;
    const fields = {
      messageId: message.id,
      kind: message.kind,
      type: message.event_type ?? undefined,
      endpointId: message.endpoint_id ?? undefined,
      attempt: message.attempts,
    };
    const outcome = this.outcome(message, attempt);
    let recorded: boolean;
    try {
      recorded = await this.record(message, outcome);
      if (!recorded)
        log.warn(
          fields,
          'outbox: outcome not recorded: the lease ran out, or the message was removed',
        );
    } catch (error) {
      // The lease runs out and the message is sent again: at least once.
      log.error({ ...fields, err: error }, 'outbox: could not record an outcome');
      return;
    }
    if (!recorded) return;
    if (outcome.kind === 'delivered') {
      this.counts.delivered += 1;
      log.info(fields, 'outbox: delivered');
    } else if (outcome.kind === 'retry') {
      this.counts.retried += 1;
      log.warn({ ...fields, error: outcome.error, retryAt: outcome.at }, 'outbox: will retry');
      // A retry due before the timer fires brings the timer forward.
      const wait = Date.parse(outcome.at) - this.ctx.now().getTime();
      if (Date.now() + wait < this.timerAt) this.schedule(wait);
    } else {
      this.counts.failed += 1;
      log.error({ ...fields, error: outcome.error }, 'outbox: gave up, marked failed');
    }
  }

  /**
   * Records an outcome together with those of the deliveries that end meanwhile, in one database
   * transaction: one durable commit for a batch, not one per message.
   */
  private record(message: OutboxMessageRow, outcome: AttemptOutcome): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.outcomes.push({ id: message.id, claim: message.claim!, outcome, resolve, reject });
      if (this.outcomes.length === 1) setImmediate(() => void this.flushOutcomes());
    });
  }

  private async flushOutcomes(): Promise<void> {
    const batch = this.outcomes.splice(0);
    try {
      const recorded = await this.ctx.db.transaction().execute(async (trx) => {
        const results: boolean[] = [];
        for (const item of batch)
          results.push(await recordAttempt(trx, item.id, item.claim, item.outcome));
        return results;
      });
      batch.forEach((item, i) => item.resolve(recorded[i]!));
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  private outcome(message: OutboxMessageRow, attempt: Attempt): AttemptOutcome {
    const now = this.ctx.now();
    if (attempt.ok)
      return { kind: 'delivered', now: now.toISOString(), clearPayload: message.kind === 'mail' };
    const error = attempt.error.slice(0, MAX_ERROR_LENGTH);
    const at = attempt.permanent
      ? undefined
      : nextAttemptAt(this.config, message.attempts, new Date(message.retries_since), now);
    return at
      ? { kind: 'retry', at: at.toISOString(), error }
      : { kind: 'failed', now: now.toISOString(), error };
  }

  private async sendMail(message: OutboxMessageRow): Promise<Attempt> {
    const mail = openQueuedMail(this.ctx.config.secretKey, message.id, message.payload);
    if (!mail)
      return { ok: false, permanent: true, error: 'the mail does not open under this server key' };
    try {
      // The outbox's id, so that a mail sent again (a node killed mid-send) has the same
      // Message-ID, and a receiver can tell it is one mail.
      await this.ctx.mailer.send({ ...mail, id: message.id });
      return { ok: true };
    } catch (error) {
      const e = error as { responseCode?: number; message?: string };
      // 5xx: the server refuses this mail for good (no such mailbox, …); 4xx and no answer pass.
      const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500;
      return { ok: false, permanent, error: e.message ?? String(error) };
    }
  }

  /**
   * A completion job (domain/completed-documents.ts), one at a time on this node: each writes PDFs
   * in a worker thread of up to COMPLETION_LIMITS' memory. A fault (the database, the worker)
   * is retried; a file that cannot be written fails for good.
   */
  private async complete(message: OutboxMessageRow): Promise<Attempt> {
    const outcome = await runCompletionJob(this.ctx, message.payload);
    return outcome.ok ? { ok: true } : { ok: false, permanent: true, error: outcome.error };
  }

  private async sendWebhook(message: OutboxMessageRow): Promise<Attempt> {
    const endpoint = message.endpoint_id
      ? await findWebhookEndpoint(this.ctx.db, message.endpoint_id)
      : undefined;
    // Removed meanwhile: its messages went with it, and the outcome will not be recorded.
    if (!endpoint) return { ok: false, permanent: true, error: 'the endpoint was removed' };
    const now = this.ctx.now();
    const result = await this.sender.send({
      url: endpoint.url,
      messageId: message.id,
      body: message.payload,
      secrets: signingSecrets(this.ctx, endpoint, now),
      now,
    });
    return result.ok ? { ok: true } : { ok: false, error: result.error };
  }

  /** Removes finished messages past their retention (idempotent: any node may run it). */
  private async sweep(): Promise<void> {
    try {
      const removed = await this.sweepFinished();
      if (removed > 0) this.ctx.log.info({ removed }, 'outbox: finished messages removed');
    } catch (error) {
      this.ctx.log.error({ err: error }, 'outbox: retention sweep failed');
    }
  }

  /** The retention sweep's work: removes finished messages past OUTBOX_RETENTION_DAYS; how many. */
  async sweepFinished(): Promise<number> {
    const before = new Date(this.ctx.now().getTime() - this.config.retentionMs).toISOString();
    return inSweepBatches((limit) => deleteFinishedMessages(this.ctx.db, before, limit));
  }
}

/** Delivers every due message once with a dispatcher of its own (the CLI, domain tests). */
export async function deliverDueMessages(ctx: DomainContext): Promise<void> {
  const dispatcher = new OutboxDispatcher(ctx);
  try {
    await dispatcher.drain();
  } finally {
    await dispatcher.stop();
  }
}
