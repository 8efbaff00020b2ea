// The outbox dispatcher of one node (docs/events.md): takes due messages from outbox_messages
// under a lease, delivers them (mails through the mailer, webhooks through WebhookSender) and
// records each outcome: delivered, tried again later with backoff, or failed. A commit that
// wrote messages wakes it at once (storage dialect: announceOutbox / listenOutbox); it also looks
// for due messages every OUTBOX_POLL_MS and when a retry falls due. Several nodes share the work
// (each message is held by one node at a time); a node killed mid-send frees its messages when
// their lease runs out, and another node (or the same one, restarted) sends them again: at least
// once, never lost.
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
  nextDueAt,
  recordAttempt,
  type AttemptOutcome,
  type OutboxMessageRow,
} from '../storage/outbox-messages.js';
import { findWebhookEndpoint } from '../storage/webhook-endpoints.js';
import { nextAttemptAt } from './backoff.js';
import { WebhookSender } from './webhook-sender.js';

/** The shortest wait before the next look for due messages (another node may hold them). */
const MIN_WAIT_MS = 10;
/** How often finished messages past OUTBOX_RETENTION_DAYS are removed. */
const RETENTION_SWEEP_MS = 3_600_000;
/** Longest error text kept with a message. */
const MAX_ERROR_LENGTH = 500;

type Attempt = { ok: true } | { ok: false; error: string; permanent?: boolean };

export class OutboxDispatcher {
  /** What this node's attempts came to since it started (recorded outcomes only). */
  readonly counts = { delivered: 0, retried: 0, failed: 0 };
  private readonly inFlight = new Set<Promise<void>>();
  private readonly outcomes: {
    id: string;
    claim: string;
    outcome: AttemptOutcome;
    resolve: (recorded: boolean) => void;
    reject: (error: unknown) => void;
  }[] = [];
  private readonly sender: WebhookSender;
  private timer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private pumping = false;
  /** The completion jobs of this node, one after another. */
  private completions: Promise<void> = Promise.resolve();
  private again = false;
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

  /** Looks for due messages now. */
  wake(): void {
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
      if (Date.now() > deadline) throw new Error(`the outbox still has ${due} due messages`);
      this.wake();
      await new Promise((done) => setTimeout(done, MIN_WAIT_MS));
    }
  }

  private async pump(): Promise<void> {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        const room = this.config.concurrency - this.inFlight.size;
        // Full: each delivery that ends pumps again.
        if (room <= 0) return;
        const now = this.ctx.now();
        const claimed = await claimDueMessages(this.ctx.db, {
          claim: randomId(),
          now: now.toISOString(),
          leaseUntil: new Date(now.getTime() + this.config.leaseMs).toISOString(),
          limit: room,
        });
        for (const message of claimed) this.track(this.deliver(message));
        if (claimed.length === room) this.again = true;
      } while (this.again && !this.stopped);
      await this.scheduleNext();
    } catch (error) {
      // The database is away: look again after the poll interval.
      this.ctx.log.error({ err: error }, 'outbox: could not take due messages');
      this.schedule(this.config.pollMs);
    } finally {
      this.pumping = false;
    }
    // Woken while it looked for the next due time: look again now.
    if (this.again && !this.stopped) this.wake();
  }

  private track(delivery: Promise<void>): void {
    this.inFlight.add(delivery);
    void delivery.finally(() => {
      this.inFlight.delete(delivery);
      this.wake();
    });
  }

  /** A timer for the next due message (a retry, a lapsed lease), at most OUTBOX_POLL_MS away. */
  private async scheduleNext(): Promise<void> {
    // With every slot taken, each delivery pumps again as it ends, and takes what is due then:
    // a query for the next due time per delivery would cost a tenth of a delivery.
    if (this.inFlight.size >= this.config.concurrency) return this.schedule(this.config.pollMs);
    const due = await nextDueAt(this.ctx.db);
    const wait = due ? Date.parse(due) - this.ctx.now().getTime() : this.config.pollMs;
    this.schedule(Math.min(this.config.pollMs, wait));
  }

  private schedule(waitMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), Math.max(MIN_WAIT_MS, waitMs));
    this.timer.unref();
  }

  private async deliver(message: OutboxMessageRow): Promise<void> {
    const { log } = this.ctx;
    const fields = {
      messageId: message.id,
      kind: message.kind,
      type: message.event_type ?? undefined,
      endpointId: message.endpoint_id ?? undefined,
      attempt: message.attempts,
    };
    let attempt: Attempt;
    try {
      attempt =
        message.kind === 'mail'
          ? await this.sendMail(message)
          : message.kind === 'completion'
            ? await this.complete(message)
            : await this.sendWebhook(message);
    } catch (error) {
      attempt = { ok: false, error: (error as Error)?.message ?? String(error) };
    }
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
      await this.ctx.mailer.send(mail);
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
  private complete(message: OutboxMessageRow): Promise<Attempt> {
    const run = this.completions.then(async (): Promise<Attempt> => {
      const outcome = await runCompletionJob(this.ctx, message.payload);
      return outcome.ok ? { ok: true } : { ok: false, permanent: true, error: outcome.error };
    });
    this.completions = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
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
