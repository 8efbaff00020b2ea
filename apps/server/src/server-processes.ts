// `pal serve` and `pal start` on several cores: with SERVER_PROCESSES above 1 (PostgreSQL only,
// config.ts says why), this process is the primary. It migrates the database and runs `prepare`
// (the demo of `pal start`) once, then forks the server processes, each a node of its own
// (startServer) on the same port: Node's cluster module has the primary accept the connections and
// hand them out in turn. One event loop serves one core at most (docs/performance.md); nodes on
// one database are what the service already runs on several machines.
//
// A server process that ends on its own is replaced; one that ends before it listens (the port is
// taken, the database went away) ends them all, as a lone server would end. SIGTERM or SIGINT
// stops every server process the way it stops a lone server, and then the primary.
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

/** In the primary: prepares the database, starts the server processes, and supervises them. */
export async function runServerProcesses(
  config: Config,
  options: ServerProcessesOptions = {},
): Promise<void> {
  const log = pino({ level: config.logLevel, base: { pid: process.pid, role: 'primary' } });
  await prepareOnce(config, options.prepare);

  const listening = new Set<Worker>();
  let announced = false;
  let stopping = false;
  const fork = () => cluster.fork();

  cluster.on('listening', (worker, address) => {
    listening.add(worker);
    if (announced || listening.size < config.serverProcesses) return;
    announced = true;
    const url = `http://${address.addressType === 6 ? `[${address.address}]` : address.address}:${address.port}`;
    log.info({ url, processes: config.serverProcesses }, 'server processes listening');
    options.onListening?.(url);
  });
  cluster.on('exit', (worker, code, signal) => {
    const hadListened = listening.delete(worker);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit();
      return;
    }
    if (!hadListened) {
      log.fatal(
        { pid: worker.process.pid, code, signal },
        'a server process ended before it listened: stopping',
      );
      stop(1);
      return;
    }
    log.error(
      { pid: worker.process.pid, code, signal },
      'a server process ended: starting another',
    );
    fork();
  });

  const stop = (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    process.exitCode = exitCode;
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(exitCode);
    for (const worker of workers) worker?.process.kill('SIGTERM');
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log.info({ signal }, 'stopping the server processes');
      stop(0);
    });

  for (let i = 0; i < config.serverProcesses; i++) fork();
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
