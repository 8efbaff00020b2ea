// `kill -9` of a server node under write load loses no acknowledged write, on either engine: a
// real `pal serve` process takes T1 creations from many concurrent callers, is killed without
// warning, and every transaction whose id it answered must be in the database afterwards.
import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/storage/database.js';
import { engine, freshDatabaseEnv } from './engine.js';
import { tempDir } from './helpers.js';
import { palNodeArgs } from './pal-process.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const examples = resolve(serverDir, '../../examples/pals');
const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');
const palArgs = [tsxCli, '--conditions=@pal-workflow/source', 'src/main.ts'];

function pal(env: Record<string, string>, ...args: string[]): Promise<Record<string, string>> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [...palArgs, ...args, '--json'],
      { cwd: serverDir, env },
      (e, out) => (e ? fail(e) : done(JSON.parse(out) as Record<string, string>)),
    );
  });
}

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

describe(`a node killed with SIGKILL under write load (${engine})`, () => {
  const dir = tempDir('pal-crash-');
  afterAll(() => dir.remove());

  it('keeps every transaction it acknowledged', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      DATA_DIR: join(dir.path, 'data'),
      PAL_SECRET_KEY: 'e7'.repeat(32),
      LOG_LEVEL: 'silent',
      ...(await freshDatabaseEnv()),
    };
    await pal(env, 'enterprise', 'create', 'Crash');
    const client = await pal(env, 'client', 'create', '--enterprise', 'Crash');
    await pal(env, 'pal', 'deploy', join(examples, 'expense-approval'), '--enterprise', 'Crash');

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const node = spawn(process.execPath, [...palNodeArgs, 'serve'], {
      cwd: serverDir,
      env: { ...env, PORT: String(port) },
      stdio: 'ignore',
    });
    const exited = new Promise((done) => node.once('exit', done));
    try {
      for (let i = 0; ; i++) {
        const up = await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (up) break;
        if (i > 300) throw new Error('the node did not start');
        await new Promise((done) => setTimeout(done, 100));
      }
      const authorization = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
      const acknowledged: string[] = [];
      let killed = false;
      const writer = async () => {
        while (!killed) {
          try {
            const response = await fetch(`${url}/services/rest/transactions`, {
              method: 'POST',
              headers: { authorization, accept: 'text/plain' },
              body: new URLSearchParams({ palId: 'expense-approval' }),
            });
            const text = await response.text();
            if (response.status === 200) acknowledged.push(text);
          } catch {
            // The connection died with the node: not acknowledged.
          }
        }
      };
      const writers = Array.from({ length: 16 }, writer);
      while (acknowledged.length < 200) await new Promise((done) => setTimeout(done, 20));
      node.kill('SIGKILL');
      killed = true;
      await Promise.all(writers);
      await exited;
      // Killed for real: nothing answers on its port any more.
      const after = await fetch(`${url}/healthz`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(after).toBe('refused');

      const db = openDatabase(loadConfig(env));
      try {
        const stored = new Set(
          (await db.selectFrom('transactions').select('id').execute()).map((r) => r.id),
        );
        expect(acknowledged.length).toBeGreaterThanOrEqual(200);
        expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      } finally {
        await db.destroy();
      }
    } finally {
      node.kill('SIGKILL');
    }
  });
});
