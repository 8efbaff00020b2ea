// `pal start` (what npm start runs) end to end: a fresh DATA_DIR, the demo set up, the printed
// credentials and demo-client.txt work against the listening server, and SIGTERM stops it; and
// `pal serve` stopped as soon as its port is open.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';
import { PalServe, serve } from './serve-process.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');

describe('pal start', () => {
  const dir = tempDir('pal-start-');
  afterAll(() => dir.remove());

  it('sets up the demo, prints working credentials, serves, and stops on SIGTERM', async () => {
    const dataDir = join(dir.path, 'data');
    const child = spawn(
      process.execPath,
      [tsxCli, '--conditions=@pal-workflow/source', 'src/main.ts', 'start'],
      {
        cwd: serverDir,
        env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const url = await new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no "Listening on" in: ${output}`)), 30_000);
      child.stdout.on('data', () => {
        const match = /Listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          done(match[1]!);
        }
      });
    });

    const credentials = readFileSync(join(dataDir, 'demo-client.txt'), 'utf8').trim();
    const [username, password] = credentials.split(':');
    expect(output).toContain(`API client (BASIC):  ${username} / ${password}`);
    const response = await fetch(`${url}/services/rest/pals`, {
      headers: {
        authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
        accept: 'application/json',
      },
    });
    expect(response.status).toBe(200);
    const ids = ((await response.json()) as { id: string }[]).map((p) => p.id);
    expect(ids).toContain('expense-approval');
    expect(ids).not.toContain('onboarding-sandbox'); // a test pal: hidden without includeTest

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('pal serve, stopped at once', () => {
  const dir = tempDir('pal-serve-');
  afterAll(() => dir.remove());

  it('closes cleanly on a SIGTERM sent the moment its port is open, before its start has ended', async () => {
    const server = new PalServe({
      PATH: process.env.PATH ?? '',
      DATA_DIR: join(dir.path, 'data'),
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    // At Fastify's "listening" line, the outbox and the sweeps are still starting: a signal then
    // ended the process at once (by the signal, closing nothing) before it was taken that early.
    let sent = false;
    server.child.stdout!.on('data', () => {
      if (sent || !server.output().includes('Server listening at')) return;
      sent = true;
      server.child.kill('SIGTERM');
    });
    expect(await server.exited).toBe(0);
    expect(server.child.signalCode).toBeNull();
    expect(server.lines().map((line) => line.msg)).toContain('server closed');
  });
});

describe('one server per SQLite file', () => {
  const dir = tempDir('pal-serve-twice-');
  afterAll(() => dir.remove());

  it('refuses a second pal serve on the same DATA_DIR while the first runs, and not once it ended (even by kill -9)', async () => {
    const dataDir = join(dir.path, 'data');
    // At info, its "listening" line says where it serves.
    const env = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' };
    const first = await serve(env, dataDir);
    const second = new PalServe({ ...env, DATA_DIR: dataDir, PORT: '0' });
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `error: another server is already serving the database ${join(dataDir, 'pal.sqlite')}: stop it first`,
    );
    // The first goes on serving.
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    // Killed, it leaves no lock behind: the operating system ends it with the process.
    first.child.kill('SIGKILL');
    await first.exited;
    const third = await serve(env, dataDir);
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
    await third.stop();
  });
});
