// Starting the service: open and migrate the database, build the app, listen, and close
// cleanly on SIGINT/SIGTERM. `start` also prepares the demo enterprise (npm start).
import type { FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config.js';
import { buildApp } from './app.js';
import type { DomainContext } from './domain/context.js';
import { createWorkflowContext, type WorkflowContext } from './workflows/context.js';
import { sweepRetention } from './domain/retention.js';
import { sweepEntries } from './domain/sessions.js';
import { sweepFailedSignIns } from './domain/sign-in-failures.js';
import { expireDueTransactions } from './domain/transactions.js';
import { oneRoundAtATime } from './domain/sweep-batches.js';
import { OutboxDispatcher } from './outbox/dispatcher.js';
import { connectDatabase } from './storage/database.js';
import { dialectOf } from './storage/adapter-dialect.js';

/** How often transactions past their end dates are moved on (EXPIRED, ARCHIVED). */
const EXPIRY_SWEEP_MS = 60_000;

export interface RunningServer {
  app: FastifyInstance;
  domain: WorkflowContext;
  /** Delivers this node's share of the outbox (mails, webhooks). */
  outbox: OutboxDispatcher;
  /** The address it listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Runs after migration and before listening (npm start prepares the demo here). */
  prepare?: (domain: DomainContext) => Promise<void>;
  logger?: boolean;
  /** Close on SIGINT/SIGTERM (the CLI); tests leave it off. */
  handleSignals?: boolean;
}

export async function startServer(
  config: Config,
  options: StartOptions = {},
): Promise<RunningServer> {
  const { db } = await connectDatabase(config);
  const domain = createWorkflowContext({ db, config });
  /** Nothing of a start that failed stays open (the pool, the port): the command ends with it. */
  const failed = async (error: unknown, app?: FastifyInstance): Promise<never> => {
    await app?.close().catch(() => undefined);
    domain.mailer.close?.();
    await db.destroy().catch(() => undefined);
    throw error;
  };
  let app: FastifyInstance;
  try {
    await options.prepare?.(domain);
    app = await buildApp(domain, { logger: options.logger ?? true });
  } catch (error) {
    return failed(error);
  }
  // Signals are taken from before the port is open: one that came between the listen and the
  // end of the start (the outbox, the sweeps) would otherwise end the process at once, closing
  // nothing. Such a signal waits for the start, then closes; after a start that failed it does
  // nothing (the start's error ends the command), and the next one ends the process as Node does.
  const signals = options.handleSignals ? (['SIGINT', 'SIGTERM'] as const) : [];
  let started!: (running: RunningServer | undefined) => void;
  const whenStarted = new Promise<RunningServer | undefined>((done) => (started = done));
  const onSignal = (signal: NodeJS.Signals) => {
    app.log.info({ signal }, 'shutting down');
    void whenStarted
      .then(async (running) => {
        if (!running) return;
        await running.close();
        process.exit(0);
      })
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'the server could not close cleanly');
        process.exit(1);
      });
  };
  for (const signal of signals) process.once(signal, onSignal);
  try {
    const running = await run(app, domain, config);
    started(running);
    return running;
  } catch (error) {
    for (const signal of signals) process.off(signal, onSignal);
    started(undefined);
    return failed(error, app);
  }
}

// A HOST that names no address of this machine: the operator must read "HOST", not a resolver's code.
const HOST_ERRORS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EADDRNOTAVAIL']);

// A port taken by another program, or one below 1024 without the right: the operator's answer is
// another PORT.
const PORT_ERRORS = new Set(['EADDRINUSE', 'EACCES']);

function listenError(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && PORT_ERRORS.has(code))
    return new ConfigError(
      'PORT',
      `cannot listen on port ${config.port} of "${config.host}": ${(error as Error).message}`,
    );
  if (code === undefined || !HOST_ERRORS.has(code)) return error;
  return new ConfigError('HOST', `cannot listen on "${config.host}": ${(error as Error).message}`);
}

/** Listens, starts the outbox and the sweeps; `close` ends them all and the database. */
async function run(
  app: FastifyInstance,
  domain: WorkflowContext,
  config: Config,
): Promise<RunningServer> {
  const { db } = domain;
  const url = await app
    .listen({ host: config.host, port: config.port })
    .catch((error: unknown) => Promise.reject(listenError(error, config)));
  const outbox = new OutboxDispatcher(domain);
  await outbox.start();
  // Each sweep on its own rounds (domain/sweep-batches.ts): a long one holds up no other. A round
  // reports what it did, and logs a failure.
  const every = <T>(what: string, work: () => Promise<T>, report: (done: T) => void) =>
    oneRoundAtATime(() =>
      work()
        .then(report)
        .catch((error: unknown) => app.log.error({ err: error }, `${what} failed`)),
    );
  const sweeps = [
    // One node at a time on a shared database (the others skip this round).
    every(
      'expiry sweep',
      () => dialectOf(db).runExclusively(db, 'expiry-sweep', () => expireDueTransactions(domain)),
      (moved) => {
        if (moved?.expired || moved?.archived)
          app.log.info(moved, 'transactions moved past their end dates');
      },
    ),
    // Entry tokens and browser sessions that can no longer be used, and how many are live.
    every(
      'token and session sweep',
      () => sweepEntries(domain),
      (counts) => app.log.info(counts, 'entry tokens and browser sessions'),
    ),
    // Failed sign-in counts whose window has ended (idempotent: any node may run it).
    every(
      'sign-in failure sweep',
      () => sweepFailedSignIns(domain),
      (removed) => {
        if (removed) app.log.info({ removed }, 'ended failed sign-in windows removed');
      },
    ),
    // Audit records past AUDIT_RETENTION_DAYS, idempotency keys past 24 hours (one node at a time).
    every(
      'retention sweep',
      () => sweepRetention(domain),
      (removed) => {
        if (removed?.auditRecords || removed?.idempotencyKeys)
          app.log.info(removed, 'old audit records and idempotency keys removed');
      },
    ),
  ];
  const sweep = setInterval(() => sweeps.forEach((round) => round()), EXPIRY_SWEEP_MS);
  sweep.unref();
  // One shutdown, however often it is asked for: a second signal (Ctrl-C reaches a server
  // process, and its primary then sends SIGTERM) waits for the first instead of cutting it short.
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      clearInterval(sweep);
      await app.close();
      await outbox.stop();
      await domain.mailer.close?.();
      await db.destroy();
      app.log.info('server closed');
    })());
  return { app, domain, outbox, url, close };
}
