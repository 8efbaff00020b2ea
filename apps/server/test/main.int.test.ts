// `pal start` (what npm start runs) end to end: a fresh DATA_DIR, the demo set up, the printed
// credentials and demo-client.txt work against the listening server, and SIGTERM stops it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

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
