// Test fixtures: a fresh DATA_DIR and a fresh database of the project's engine (a SQLite file, or
// a new PostgreSQL database: test/engine.ts), and a domain context on them.
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../src/config.js';
import { migrateToLatest, openDatabase, type Db } from '../src/storage/database.js';
import { dialectOf } from '../src/storage/adapter-dialect.js';
import { pino } from 'pino';
import { createWorkflowContext, type WorkflowContext } from '../src/workflows/context.js';
import { buildPalPackage } from '../src/domain/pal-manifest.js';
import { deployPalPackage } from '../src/domain/pals.js';
import type { Mailer } from '../src/mail/mailer.js';
import type { PalSearch } from '../src/domain/pals.js';
import type { TransactionSearch } from '../src/domain/transactions.js';
import { freshDatabaseEnv } from './engine.js';

export const TEST_SECRET_KEY = '0f'.repeat(32);

export function tempDir(prefix = 'pal-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * The rows of `table` in a SQLite database file alone, without its log: what checkpoints have
 * copied there. Read from a copy beside it (`<path>.alone`), so that the log is neither read nor
 * recovered. Undefined when the file alone is half written (a checkpoint's copy was cut short:
 * SQLite mends it from the log at the next open).
 */
export function rowsInDatabaseFileAlone(path: string, table: string): number | undefined {
  const copy = `${path}.alone`;
  copyFileSync(path, copy);
  const file = new Database(copy, { readonly: true });
  try {
    return file.prepare(`select count(*) from "${table}"`).pluck().get() as number;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_CORRUPT') return undefined;
    throw error;
  } finally {
    file.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(copy + suffix, { force: true });
  }
}

export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: dataDir,
    PAL_SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'silent',
    ...env,
  });
}

export async function migratedDatabase(config: Config): Promise<Db> {
  const db = openDatabase(config);
  await migrateToLatest(db);
  await dialectOf(db).refreshChangeStamp(db);
  return db;
}

export interface TestContext {
  ctx: WorkflowContext;
  dir: string;
  close(): Promise<void>;
}

/** A domain context on a fresh, migrated database and a temporary DATA_DIR (outbox mail). */
export async function testContext(
  env: Record<string, string> = {},
  options: { now?: () => Date; mailer?: Mailer } = {},
): Promise<TestContext> {
  const dir = tempDir();
  const config = testConfig(dir.path, { ...(await freshDatabaseEnv()), ...env });
  const db = await migratedDatabase(config);
  const log = pino({ level: 'silent' });
  const ctx = createWorkflowContext({ db, config, log, now: options.now, mailer: options.mailer });
  return {
    ctx,
    dir: dir.path,
    async close() {
      ctx.mailer.close();
      await db.destroy();
      dir.remove();
    },
  };
}

/** Deploys a pal from a manifest object (and optional workflow and document files) to the enterprise. */
export async function deployManifest(
  ctx: WorkflowContext,
  enterpriseId: string,
  manifest: Record<string, unknown>,
  files: Record<string, string | Uint8Array> = {},
) {
  return deployPalPackage(ctx, enterpriseId, await buildPalPackage(manifest, files));
}

/** A clock that tests move by hand. */
export function manualClock(start = new Date('2025-03-01T09:00:00.000Z')) {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}

/** A P1 search as the skeleton reads it from headers that give only `given`. */
export function palSearch(given: Partial<PalSearch> = {}): PalSearch {
  return {
    exactName: false,
    exactDescription: false,
    exactCategory: false,
    exactPublisher: false,
    startRecord: 0,
    includeTest: false,
    includeInstalled: false,
    matchAny: false,
    ...given,
  };
}

/** A T2 search as the skeleton reads it from headers that give only `given`. */
export function transactionSearch(given: Partial<TransactionSearch> = {}): TransactionSearch {
  return {
    exactName: false,
    exactDescription: false,
    exactCategory: false,
    startRecord: 0,
    includeTest: false,
    ...given,
  };
}
