// `pal client rotate` and `pal client delete` against a running server on the same database, as
// an operator runs them: the CLI in its own process, the server answering over HTTP. Shared by the
// CLI suites of both engines (test/cli.int.test.ts, test/cli.postgres.int.test.ts).
import { expect } from 'vitest';
import { loadConfig } from '../src/config.js';
import { verifyClient } from '../src/domain/clients.js';
import { openDatabase } from '../src/storage/database.js';
import { dialectOf } from '../src/storage/adapter-dialect.js';
import { startServer } from '../src/server.js';
import { basic } from './harness.js';
import type { CliRun } from './pal-process.js';

type Pal = (env: Record<string, string>, ...args: string[]) => Promise<CliRun>;

/** Each CLI command is a process of its own (a few seconds each on a busy machine). */
export const ROTATION_TIMEOUT_MS = 240_000;

/** The one JSON object a --json command prints. */
function json(run: CliRun): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/**
 * Creates two enterprises and a client through the CLI, starts a server on the same database, and
 * rotates and deletes the client through the CLI while the server answers.
 */
export async function rotateAndDeleteAgainstAServer(pal: Pal, env: Record<string, string>) {
  for (const name of ['Rota', 'Other Rota'])
    json(await pal(env, 'enterprise', 'create', name, '--json'));
  const created = json(
    await pal(env, 'client', 'create', '--enterprise', 'Rota', '--username', 'rota-erp', '--json'),
  );
  const first = created.password as string;
  const config = loadConfig({ ...env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' });
  const server = await startServer(config, { logger: false });
  const boundMs = dialectOf(server.domain.db).changeStampBoundMs;
  const status = async (password: string) => {
    const response = await fetch(`${server.url}/services/rest/pals`, {
      headers: { Authorization: basic('rota-erp', password), Accept: 'application/json' },
    });
    await response.arrayBuffer();
    return response.status;
  };
  /** What the server answers once another process's change is seen (the change stamp's bound). */
  const settled = async (password: string) => {
    await new Promise((resolve) => setTimeout(resolve, boundMs + 50));
    return status(password);
  };
  try {
    expect(await status(first)).toBe(200); // now in the server's verified-credentials cache

    const rotated = json(
      await pal(env, 'client', 'rotate', '--enterprise', 'ROTA', 'rota-erp', '--json'),
    );
    expect(rotated).toEqual({
      enterprise: 'Rota',
      username: 'rota-erp',
      password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      oldPasswordExpiresAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const second = rotated.password as string;
    // The grace period is the setting's: 24 hours by default.
    const grace = Date.parse(rotated.oldPasswordExpiresAt as string) - Date.now();
    expect(grace).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(grace).toBeLessThanOrEqual(24 * 3_600_000);
    expect(await settled(second)).toBe(200); // the new secret works at once
    expect(await status(first)).toBe(200); // the old one for the grace period
    // ... and not after it (the server's clock is real: ask the domain with a later one).
    const db = openDatabase(config);
    try {
      const at = (ms: number) => ({ db, config, now: () => new Date(ms) });
      const end = Date.parse(rotated.oldPasswordExpiresAt as string);
      expect(await verifyClient(at(end - 1), 'rota-erp', first)).not.toBeNull();
      expect(await verifyClient(at(end), 'rota-erp', first)).toBeNull();
      expect(await verifyClient(at(end), 'rota-erp', second)).not.toBeNull();
    } finally {
      await db.destroy();
    }

    // For a leaked secret: no grace period, the old secret stops at once.
    const text = await pal(
      { ...env, CLIENT_SECRET_GRACE_SECONDS: '0' },
      'client',
      'rotate',
      '--enterprise',
      'Rota',
      'rota-erp',
    );
    expect(text.code).toBe(0);
    const third = /password: ([A-Za-z0-9_-]{43})/.exec(text.stdout)![1]!;
    expect(text.stdout).toContain('The old password stopped working now.');
    expect(await settled(second)).toBe(401);
    expect(await status(first)).toBe(401);
    expect(await status(third)).toBe(200);

    // Another enterprise's name, or an unknown client: not found, nothing changes.
    for (const args of [
      ['rotate', '--enterprise', 'Other Rota', 'rota-erp'],
      ['delete', '--enterprise', 'Rota', 'nobody'],
    ]) {
      const refused = await pal(env, 'client', ...args, '--json');
      expect(refused.code, args.join(' ')).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/^error: API client "(rota-erp|nobody)" not found\n$/);
    }
    expect(await settled(third)).toBe(200);

    expect(
      json(await pal(env, 'client', 'delete', '--enterprise', 'Rota', 'rota-erp', '--json')),
    ).toEqual({
      enterprise: 'Rota',
      username: 'rota-erp',
      deleted: true,
    });
    // Stopped on the server (another process) within the change stamp's bound.
    expect(await settled(third)).toBe(401);
  } finally {
    await server.close();
  }
}
