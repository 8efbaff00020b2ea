// `pal serve` and `pal start` on several cores: with SERVER_PROCESSES above 1 (PostgreSQL only,
// config.ts says why), this process is the primary. It migrates the database and runs `prepare`
// (the demo of `pal start`) once, then forks the server processes, each a node of its own
// (startServer) accepting connections from one socket the primary opened (Node's cluster module;
// docs/decisions.md says why not its round-robin). One event loop serves one core at most
// (docs/performance.md); nodes on one database are what the service already runs on several
// machines.
//
// A server process that ends before the service first listens (the port is taken, the database is
// out of reach) ends them all with exit code 1, as a lone server would end. One that ends later is
// replaced, after a pause that grows while replacements keep ending soon. SIGTERM or SIGINT stops
// every server process the way it stops a lone server, and then the primary.
import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import type { Config } from './config.js';
import type { DomainContext } from './domain/context.js';
import { connectDatabase } from './storage/database.js';
import { createWorkflowContext } from './workflows/context.js';

export interface ServerProcessesOptions {
  /** Runs once, after migration and before any server process starts. */
  prepare?: (domain: DomainContext) => Promise<void>;
  /** Called once every server process listens, with the address they share. */
  onListening?: (url: string) => void;
}

/** A replacement waits this long after a process that lived less than STABLE_MS, doubling. */
const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;
/** A process that served this long before it ended starts the back-off afresh. */
const STABLE_MS = 10_000;

/** In the primary: prepares the database, starts the server processes, and supervises them. */
export async function runServerProcesses(
  config: Config,
  options: ServerProcessesOptions = {},
): Promise<void> {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  await prepareOnce(config, options.prepare);
  // The server processes accept from the shared socket themselves. With cluster's default (the
  // primary accepts and hands each connection on), a connection handed to a process as it dies
  // is never closed: the primary holds it until an acknowledgement that cannot come, and its
  // client waits for ever. Shared, a connection still queued goes to a living process.
  cluster.schedulingPolicy = cluster.SCHED_NONE;

  // Every process forked and not yet ended, with when it was started; those that listen.
  const live = new Map<Worker, number>();
  const listening = new Set<Worker>();
  let announced = false;
  let stopping = false;
  let restartDelay = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  const fork = () => live.set(cluster.fork(), performance.now());

  cluster.on('listening', (worker, address) => {
    listening.add(worker);
    if (announced || listening.size < config.serverProcesses) return;
    announced = true;
    const url = `http://${shownHost(address.address, address.addressType)}:${address.port}`;
    log.info({ url, processes: config.serverProcesses }, 'server processes listening');
    options.onListening?.(url);
  });
  cluster.on('exit', (worker, code, signal) => {
    const startedAt = live.get(worker) ?? performance.now();
    live.delete(worker);
    const hadListened = listening.delete(worker);
    if (stopping) {
      if (code !== 0 && signal === null) process.exitCode = 1;
      if (live.size === 0) process.exit();
      return;
    }
    // `endedPid`: the log line has the primary's own `pid` already.
    const ended = { endedPid: worker.process.pid, code, signal };
    // Before the service ever listened, an ending is a start-up that fails (a port in use, a
    // database out of reach): as a lone server would, stop, rather than start it again for ever.
    if (!announced) {
      log.fatal(ended, 'a server process ended before the service listened: stopping');
      stop(1);
      return;
    }
    // Later, another takes its place; quickly only if it had served a while, so that a process
    // that cannot start (the database is away) or ends at once is retried with growing pauses.
    const lived = performance.now() - startedAt;
    restartDelay =
      hadListened && lived >= STABLE_MS
        ? 0
        : Math.min(MAX_RESTART_DELAY_MS, Math.max(FIRST_RESTART_DELAY_MS, restartDelay * 2));
    log.error({ ...ended, restartInMs: restartDelay }, 'a server process ended: starting another');
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      if (!stopping) fork();
    }, restartDelay);
  });

  const stop = (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    process.exitCode = exitCode;
    clearTimeout(restartTimer);
    if (live.size === 0) process.exit();
    for (const worker of live.keys()) worker.process.kill('SIGTERM');
  };
  // A second signal while they stop changes nothing: ended by it, the primary would take every
  // server process down at once, in the middle of its requests (cluster ends them with it).
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => {
      if (stopping) return;
      log.info({ signal }, 'stopping the server processes');
      stop(0);
    });

  for (let i = 0; i < config.serverProcesses; i++) fork();
}

/** A listening address as a client would use it: a wildcard address is this machine. */
function shownHost(address: string, family: number | string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '[::1]';
  return family === 6 || family === 'udp6' || address.includes(':') ? `[${address}]` : address;
}

/** Migrates (connectDatabase does) and prepares, then lets go of everything it opened. */
async function prepareOnce(
  config: Config,
  prepare: ServerProcessesOptions['prepare'],
): Promise<void> {
  const { db } = await connectDatabase(config);
  const domain = createWorkflowContext({ db, config });
  try {
    await prepare?.(domain);
  } finally {
    await domain.engine.close();
    await domain.mailer.close?.();
    await db.destroy();
  }
}
