// SERVER_PROCESSES: `pal serve` as the primary of several server processes on one port, each a
// node on the same PostgreSQL database (server-processes.ts). Run as an operator runs it: the real
// bin's sources in a process of their own, its log read from stdout, signals sent to its pid.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@pal-workflow/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/storage/database.js';
import { engine, freshDatabaseEnv } from './engine.js';
import { tempDir } from './helpers.js';
import {
  crashEnterprise,
  palNodeArgs,
  runPal,
  startT1Writers,
  WRITE_ANSWER_TIMEOUT_MS,
} from './pal-process.js';
import { PalServe } from './serve-process.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));

/** A `pal serve` primary of several server processes. */
class Primary extends PalServe {
  /** The pids of the server processes that have logged they listen, in order. */
  listeningPids(): number[] {
    return this.lines()
      .filter((line) => line.msg?.startsWith('Server listening at'))
      .map((line) => line.pid!);
  }

  /** Once every server process listens: the address they share. */
  async listening(): Promise<string> {
    const line = await this.until('"server processes listening"', () =>
      this.lines().find((l) => l.msg === 'server processes listening'),
    );
    return line.url!;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What each test's `pal` runs with: a database of its own, two server processes, their log. */
async function twoProcessesEnv(
  dataDir: string,
  overrides: Record<string, string> = {},
): Promise<Record<string, string>> {
  return {
    PATH: process.env.PATH ?? '',
    DATA_DIR: dataDir,
    PAL_SECRET_KEY: 'c4'.repeat(32),
    ...(await freshDatabaseEnv()),
    SERVER_PROCESSES: '2',
    PORT: '0',
    LOG_LEVEL: 'info',
    WORKFLOW_WORKERS: '1',
    ...overrides,
  };
}

describe.runIf(engine === 'postgres')('SERVER_PROCESSES=2 on PostgreSQL', () => {
  const dir = tempDir('pal-processes-');
  let env: Record<string, string>;
  let authorization: string;
  let primary: Primary;
  let url: string;

  beforeAll(async () => {
    env = await twoProcessesEnv(join(dir.path, 'data'));
    authorization = await crashEnterprise(env);
    primary = new Primary(env);
    url = await primary.listening();
  }, 120_000);
  afterAll(async () => {
    primary?.child.kill('SIGKILL');
    for (const pid of primary?.listeningPids() ?? []) if (alive(pid)) process.kill(pid, 'SIGKILL');
    dir.remove();
  });

  it('serves from two processes on one port, each answering with the shared database', async () => {
    const pids = primary.listeningPids();
    expect(new Set(pids).size).toBe(2);
    expect(pids).not.toContain(primary.child.pid);

    // New connections, as many clients would open them, until each process has served a write:
    // each process accepts from the shared socket, and which one takes a connection is the
    // kernel's choice. Our X-Request-Id names the process that served a request in the log.
    const servedBy = async (reqIds: string[]) => {
      const lines = await primary.until(`the log lines of ${reqIds.join(', ')}`, () => {
        const found = reqIds.map((id) => primary.lines().find((line) => line.reqId === id));
        return found.every(Boolean) ? found : undefined;
      });
      return lines.map((line) => line!.pid!);
    };
    // The id of a new transaction comes as text; a transaction reads as JSON.
    const request = (path: string, reqId: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: {
          authorization,
          accept: init.method === 'POST' ? 'text/plain' : 'application/json',
          connection: 'close',
          'x-request-id': reqId,
        },
      });
    const written = new Map<number, string>();
    for (let round = 0; written.size < 2 && round < 30; round++) {
      const reqIds = Array.from({ length: 6 }, (_, i) => `write-${round}-${i}`);
      const ids = await Promise.all(
        reqIds.map(async (reqId) => {
          const response = await request('/services/rest/transactions', reqId, {
            method: 'POST',
            body: new URLSearchParams({ palId: 'expense-approval' }),
          });
          expect(response.status).toBe(200);
          return response.text();
        }),
      );
      (await servedBy(reqIds)).forEach((pid, i) => written.has(pid) || written.set(pid, ids[i]!));
    }
    expect([...written.keys()].sort()).toEqual([...pids].sort());

    // Each process reads what the other wrote.
    for (const [writer, id] of written) {
      let readByOther = false;
      for (let round = 0; !readByOther && round < 30; round++) {
        const reqIds = Array.from({ length: 6 }, (_, i) => `read-${writer}-${round}-${i}`);
        const statuses = await Promise.all(
          reqIds.map(
            async (reqId) => (await request(`/services/rest/transactions/${id}`, reqId)).status,
          ),
        );
        expect(statuses).toEqual(reqIds.map(() => 200));
        readByOther = (await servedBy(reqIds)).some((pid) => pid !== writer);
      }
      expect(readByOther).toBe(true);
    }
  });

  it('replaces a server process that dies, and keeps serving', async () => {
    const [victim, survivor] = primary.listeningPids();
    process.kill(victim!, 'SIGKILL');
    const replacement = await primary.until('a replacement', () =>
      primary.listeningPids().find((pid) => pid !== victim && pid !== survivor),
    );
    expect(alive(replacement)).toBe(true);
    expect(alive(survivor!)).toBe(true);
    expect(primary.lines().some((line) => line.msg?.startsWith('a server process ended'))).toBe(
      true,
    );
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        fetch(`${url}/services/rest/pals`, {
          headers: { authorization, accept: 'application/json', connection: 'close' },
        }).then((r) => r.status),
      ),
    );
    expect(answers).toEqual([200, 200, 200, 200, 200, 200]);
  }, 60_000);

  it('stops every server process, and then itself, on SIGTERM', async () => {
    const pids = primary.listeningPids().filter(alive);
    expect(pids).toHaveLength(2);
    primary.child.kill('SIGTERM');
    expect(await primary.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60_000);
});

describe.runIf(engine === 'postgres')('SERVER_PROCESSES=2 under write load', () => {
  const dir = tempDir('pal-processes-');
  afterAll(() => dir.remove());

  it(
    'answers every request and keeps every acknowledged write through three kill -9',
    async () => {
      const env = await twoProcessesEnv(join(dir.path, 'data'), {
        // Sixteen writers of one client make far more than its default 6,000 requests a minute.
        RATE_LIMIT_CLIENT_REQUESTS: '1000000',
      });
      const authorization = await crashEnterprise(env);
      const primary = new Primary(env);
      const killed: number[] = [];
      try {
        const url = await primary.listening();
        const acknowledged: string[] = [];
        const writers = startT1Writers(
          { url },
          authorization,
          'expense-approval',
          16,
          acknowledged,
        );
        const moreWrites = async (what: string) => {
          const before = acknowledged.length;
          await primary.until(what, () => (acknowledged.length >= before + 200 ? true : undefined));
        };
        try {
          for (let round = 0; round < 3; round++) {
            await moreWrites(`writes before kill ${round + 1}`);
            const victim = primary
              .listeningPids()
              .find((pid) => alive(pid) && !killed.includes(pid));
            process.kill(victim!, 'SIGKILL');
            killed.push(victim!);
            await primary.until(`the replacement of ${victim}`, () =>
              primary.listeningPids().filter((pid) => !killed.includes(pid)).length >= 2
                ? true
                : undefined,
            );
          }
          await moreWrites('writes after the last replacement');
        } finally {
          await writers.stop();
        }
        // A connection cut by the kill is an error its client sees at once; one the primary had
        // accepted and never handed on would leave its client waiting for ever.
        expect(writers.unanswered).toBe(0);
        const db = openDatabase(loadConfig(env));
        try {
          const stored = new Set(
            (await db.selectFrom('transactions').select('id').execute()).map((r) => r.id),
          );
          expect(acknowledged.length).toBeGreaterThanOrEqual(800);
          expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
        } finally {
          await db.destroy();
        }
      } finally {
        primary.child.kill('SIGKILL');
        for (const pid of primary.listeningPids()) if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
    180_000 + WRITE_ANSWER_TIMEOUT_MS,
  );
});

describe.runIf(engine === 'postgres')('SERVER_PROCESSES=2, stopped with Ctrl-C', () => {
  const dir = tempDir('pal-processes-');
  afterAll(() => dir.remove());

  it('ends every process once, cleanly, when the whole group gets SIGINT', async () => {
    const primary = new Primary(await twoProcessesEnv(join(dir.path, 'data')), true);
    try {
      await primary.listening();
      const pids = primary.listeningPids();
      expect(pids).toHaveLength(2);
      // A terminal's Ctrl-C: SIGINT to the primary and to every server process at once; each
      // server process then gets the primary's SIGTERM too, in the middle of its shutdown.
      process.kill(-primary.child.pid!, 'SIGINT');
      expect(await primary.exited).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
      // Each closed its database pool: a server cut short by the second signal would not log it.
      const closed = primary.lines().filter((line) => line.msg === 'server closed');
      expect(closed.map((line) => line.pid).sort()).toEqual([...pids].sort());
    } finally {
      if (primary.child.exitCode === null) process.kill(-primary.child.pid!, 'SIGKILL');
    }
  }, 120_000);
});

describe.runIf(engine === 'postgres')('pal start with SERVER_PROCESSES=2', () => {
  const dir = tempDir('pal-processes-');
  afterAll(() => dir.remove());

  it('sets up the demo once, prints one banner, and the README call works on it', async () => {
    const dataDir = join(dir.path, 'data');
    const child = spawn(process.execPath, [...palNodeArgs, 'start'], {
      cwd: serverDir,
      env: await twoProcessesEnv(dataDir, {
        // A port of its own: the entry URL is built from PUBLIC_URL, which follows PORT.
        PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    try {
      for (let i = 0; !/Listening on http/.test(output); i++) {
        if (i > 600 || child.exitCode !== null) throw new Error(`no "Listening on" in: ${output}`);
        await new Promise((done) => setTimeout(done, 100));
      }
      const url = /Listening on (http:\/\/\S+)/.exec(output)![1]!;
      expect(output.match(/API client \(BASIC\)/g)).toHaveLength(1);
      expect(output.match(/Listening on/g)).toHaveLength(1);
      const credentials = readFileSync(join(dataDir, 'demo-client.txt'), 'utf8').trim();
      expect(output).toContain(`API client (BASIC):  ${credentials.replace(':', ' / ')}`);

      // The README's call: an entry token for the demo's employee, then the entry itself.
      const answers = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const token = await fetch(`${url}/services/rest/pals/expense-approval/token`, {
            method: 'POST',
            headers: {
              authorization: `Basic ${Buffer.from(credentials).toString('base64')}`,
              accept: 'text/plain',
              connection: 'close',
            },
            body: new URLSearchParams({ userSSO: 'demo-employee-erika-sso' }),
          });
          const entry = await token.text();
          const entered = await fetch(entry, { redirect: 'manual' });
          return [token.status, entered.status, entered.headers.get('location')];
        }),
      );
      expect(answers).toEqual(
        answers.map(() => [200, 303, expect.stringMatching(/^\/services\/session\/[\w-]{12}$/)]),
      );
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});

describe.runIf(engine === 'postgres')('SERVER_PROCESSES=2 when the server cannot start', () => {
  const dir = tempDir('pal-processes-');
  afterAll(() => dir.remove());

  it('ends with exit code 1 and the reason, when its port is taken', async () => {
    const taken = createServer();
    const port = await new Promise<number>((done) =>
      taken.listen(0, '127.0.0.1', () => done((taken.address() as AddressInfo).port)),
    );
    const primary = new Primary(
      await twoProcessesEnv(join(dir.path, 'data'), { PORT: String(port) }),
    );
    try {
      const code = await Promise.race([
        primary.exited,
        new Promise((done) => setTimeout(() => done('still running after 60 s'), 60_000)),
      ]);
      expect(code).toBe(1);
      expect(primary.output()).toContain('EADDRINUSE');
      expect(
        primary.lines().some((line) => line.msg?.includes('ended before the service listened')),
      ).toBe(true);
    } finally {
      primary.child.kill('SIGKILL');
      taken.close();
    }
  }, 90_000);
});

describe.runIf(engine === 'sqlite')('SERVER_PROCESSES on SQLite', () => {
  const dir = tempDir('pal-processes-');
  afterAll(() => dir.remove());

  it('is refused above 1, with the setting named', async () => {
    const run = await runPal(
      { DATA_DIR: join(dir.path, 'data'), SERVER_PROCESSES: '2', PORT: '0' },
      'serve',
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('SERVER_PROCESSES');
    expect(run.stderr).toContain('PostgreSQL');
  });
});
