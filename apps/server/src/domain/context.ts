// What every domain function works with: the database, the settings, the mailer, a logger, the
// clock, the read cache and the workflow syntax check. Built once per process (or per test) and
// passed as the first argument, so the domain has no globals and no Fastify. The parts that belong
// to a higher layer (the syntax check compiles with the workflow engine's QuickJS) are built where
// the service is assembled and handed in, typed here by what the domain needs of them.
import { pino, type Logger } from 'pino';
import type { Config } from '../config.js';
import { createMailer, type Mailer } from '../mail/mailer.js';
import type { Db } from '../storage/database.js';
import { dialectOf } from '../storage/adapter-dialect.js';
import { ChangeFeed } from './change-feed.js';
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
  /** Refuses a pal whose workflow modules do not compile or cannot run (deployPalPackage). */
  readonly checkWorkflows: WorkflowCheck;
  /** The clock; tests may fix it. */
  now(): Date;
}

/**
 * Compiles each of a pal's modules without running it and checks that the pal's modes can run
 * one: throws an InvalidArgumentError naming each problem on its own line (`FOLDER/FILE:LINE:
 * message` for a module that does not compile or imports a file the pal lacks), else returns the
 * warnings, one a line (workflows/deploy-check.ts).
 */
export type WorkflowCheck = (pkg: WorkflowPackage) => Promise<string[]>;

/** A PalPackage (pal-manifest.ts), as far as the check reads it without this module importing it. */
export interface WorkflowPackage {
  readonly manifest: object;
  readonly files: Readonly<Record<string, string>>;
  readonly source: string;
}

export interface DomainContextOptions {
  db: Db;
  config: Config;
  mailer?: Mailer;
  log?: Logger;
  now?: () => Date;
  checkWorkflows: WorkflowCheck;
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
    checkWorkflows: options.checkWorkflows,
    now,
  };
}
