// Test fixtures: a fresh DATA_DIR with a real SQLite file per test file, and a domain context on it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../src/config.js';
import { migrateToLatest, openDatabase, type Db } from '../src/storage/database.js';

export const TEST_SECRET_KEY = '0f'.repeat(32);

export function tempDir(prefix = 'pal-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
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
  return db;
}
