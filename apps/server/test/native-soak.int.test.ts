// The native SQLite module under the stresses that aborted better-sqlite3 12 on Node 24
// (nodejs/node#65446: a Statement destructor run by the garbage collector outside any JavaScript
// context), and the faults the workflow engine's backstop and a crash bring: worker threads
// terminated in the middle of a query, a process that exits with statements alive, kill -9 under
// write load. Each runs test/fixtures/native-soak.mjs in a process of its own, so an abort shows
// as its exit signal instead of taking the test runner down.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const SOAK = fileURLToPath(new URL('./fixtures/native-soak.mjs', import.meta.url));
const dir = tempDir('pal-soak-');
afterAll(() => dir.remove());

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function soak(mode: string, env: Record<string, string> = {}): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SOAK, mode, dir.path], {
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('the native SQLite module under stress', () => {
  it('statements left to the garbage collector while socket callbacks allocate: no abort', async () => {
    const ended = await soak('statements');
    expect([ended.code, ended.signal, ended.stderr]).toEqual([0, null, '']);
    const { prepared, echoes } = JSON.parse(ended.stdout) as { prepared: number; echoes: number };
    expect(prepared).toBeGreaterThan(5_000);
    expect(echoes).toBeGreaterThan(100);
  });

  it('worker threads that open the database and are terminated mid-query: no abort', async () => {
    const ended = await soak('workers');
    expect([ended.code, ended.signal, ended.stderr]).toEqual([0, null, '']);
    expect(JSON.parse(ended.stdout)).toEqual({ terminated: 40 });
  });

  it('kill -9 under write load loses no acknowledged write', async () => {
    const child = spawn(process.execPath, [SOAK, 'writes', dir.path]);
    let acknowledged = '';
    child.stdout.on('data', (chunk) => (acknowledged += chunk));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const ids = acknowledged
      .split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number);
    expect(ids.length).toBeGreaterThan(100);
    const db = new Database(join(dir.path, 'writes.sqlite'), { readonly: true });
    const kept = new Set(
      (db.prepare('select id from acked').all() as { id: number }[]).map((row) => row.id),
    );
    db.close();
    expect(ids.filter((id) => !kept.has(id))).toEqual([]);
  });
});
