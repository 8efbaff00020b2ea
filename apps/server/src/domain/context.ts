// What every domain function works with: the database, the settings, the mailer, a logger, the
// clock, the read cache and the workflow workers. Built once per process (or per test) and passed as
// the first argument, so the domain has no globals and no Fastify.
import { pino, type Logger } from 'pino';
import type { Config } from '../config.js';
import { createMailer, type Mailer } from '../mail/mailer.js';
import type { Db } from '../storage/database.js';
import { dialectOf } from '../storage/dialect-of.js';
import { ChangeFeed } from './change-feed.js';
import { WorkerPool } from '../workflows/pool.js';
import { ReadCache } from './read-cache.js';

export interface DomainContext {
  readonly db: Db;
  readonly config: Config;
  readonly mailer: Mailer;
  readonly log: Logger;
  /** Announces the username of every API client created, changed or deleted by this process. */
  readonly clientChanges: ChangeFeed<string>;
  /** Read-through cache of pals, dropped on any change of the data (read-cache.ts). */
  readonly cache: ReadCache;
  /** The sandbox workers that run workflows (threads start at the first run). */
  readonly workflows: WorkerPool;
  /** The clock; tests may fix it. */
  now(): Date;
}

/**
 * How long past its time limit a run may take before its worker is ended: QuickJS checks the
 * limit every few thousand instructions, but not inside a long builtin call.
 */
const WORKFLOW_BACKSTOP_GRACE_MS = 500;

export interface DomainContextOptions {
  db: Db;
  config: Config;
  mailer?: Mailer;
  log?: Logger;
  now?: () => Date;
}

export function createDomainContext(options: DomainContextOptions): DomainContext {
  const log = options.log ?? pino({ level: options.config.logLevel });
  const now = options.now ?? (() => new Date());
  return {
    db: options.db,
    config: options.config,
    mailer: options.mailer ?? createMailer(options.config, log),
    log,
    clientChanges: new ChangeFeed<string>(),
    cache: new ReadCache(() => dialectOf(options.db).changeStamp(options.db)),
    workflows: new WorkerPool({
      size: options.config.workflowWorkers,
      memoryLimitBytes: options.config.workflowMemoryMb * 1024 * 1024,
      backstopGraceMs: WORKFLOW_BACKSTOP_GRACE_MS,
      workerHeapMb: options.config.workflowWorkerHeapMb,
      runsPerTenant: options.config.workflowRunsPerEnterprise,
      queuePerTenant: options.config.workflowQueuePerEnterprise,
      log,
    }),
    now,
  };
}
