// The V8 heap flags of the server's commands (bin/node-flags.js, docs/configuration.md "Memory"):
// what the settings give, and that `pal serve` through the bin (what `npm start` runs) really
// serves under them. (The other tests start src/main.ts directly, on V8's defaults.)
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { serverNodeFlags } from '../bin/node-flags.js';
import { tempDir } from './helpers.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
/** What this node prints to stdout when run with `args`. */
const node = async (args: string[]) => (await promisify(execFile)(process.execPath, args)).stdout;
const bin = join(serverDir, 'bin/pal.js');

describe('serverNodeFlags', () => {
  it('gives a 4 MiB semi-space and a growing factor of 1.2 by default, nothing for a setting of 0', () => {
    const defaults = ['--max-semi-space-size=4', '--heap-growing-percent=20'];
    expect(serverNodeFlags({})).toEqual({ flags: defaults });
    expect(
      serverNodeFlags({ V8_SEMI_SPACE_MB: '', V8_OLD_SPACE_MB: '', V8_HEAP_GROWING_PERCENT: '' }),
    ).toEqual({ flags: defaults });
    expect(serverNodeFlags({ V8_SEMI_SPACE_MB: '0', V8_HEAP_GROWING_PERCENT: '0' })).toEqual({
      flags: [],
    });
    expect(
      serverNodeFlags({
        V8_SEMI_SPACE_MB: '16',
        V8_OLD_SPACE_MB: '512',
        V8_HEAP_GROWING_PERCENT: '100',
      }),
    ).toEqual({
      flags: ['--max-semi-space-size=16', '--max-old-space-size=512', '--heap-growing-percent=100'],
    });
  });

  it('gives node flags that it takes, and that set what they say', async () => {
    // Every default flag among them: one node did not take would stop `pal serve` at start.
    const { flags } = serverNodeFlags({ V8_OLD_SPACE_MB: '300' });
    // Written as plain text: `-p` colours a number when FORCE_COLOR is set (as nx sets it).
    const limit = await node([
      ...flags!,
      '-e',
      "process.stdout.write(String(require('node:v8').getHeapStatistics().heap_size_limit))",
    ]);
    // The old generation's 300 MiB and the young one's semi-spaces (V8 adds them to the limit).
    expect(Number(limit) / 2 ** 20).toBeGreaterThanOrEqual(300);
    expect(Number(limit) / 2 ** 20).toBeLessThan(400);
  });

  it('makes V8 grow the old generation by a fifth after a full collection (by up to 4 times, left to it)', async () => {
    /** The growing factors V8 applied, from its trace of one full collection. */
    const factors = async (flags: string[]) => {
      const trace = await node([...flags, '--trace-gc-verbose', '--expose-gc', '-e', 'gc()']);
      // Node 22's V8 prints the factor it computed before the flag overrides it, and the one it
      // applied at the end of its "Limit:" lines; Node 24's prints only the applied one.
      const limits = [...trace.matchAll(/Limit: .*\((\d+\.\d)\)$/gm)];
      const found = limits.length > 0 ? limits : [...trace.matchAll(/factor (\d+\.\d)/g)];
      return [...new Set(found.map((match) => Number(match[1])))];
    };
    expect(await factors(serverNodeFlags({}).flags!)).toEqual([1.2]);
    // V8's own choice: up to its ceiling here (4.0 where the heap limit is 2 GiB or more).
    const own = await factors([]);
    expect(own.length).toBeGreaterThan(0);
    expect(own).not.toContain(1.2);
  });

  it('names a bad setting', () => {
    for (const raw of ['4.5', '-1', 'lots', '1025'])
      expect(serverNodeFlags({ V8_SEMI_SPACE_MB: raw }).error).toBe(
        `bad setting V8_SEMI_SPACE_MB: expected an integer from 0 to 1024, got "${raw}"`,
      );
    expect(serverNodeFlags({ V8_HEAP_GROWING_PERCENT: '1001' }).error).toBe(
      'bad setting V8_HEAP_GROWING_PERCENT: expected an integer from 0 to 1000, got "1001"',
    );
    expect(serverNodeFlags({ V8_OLD_SPACE_MB: '1e3' }).error).toMatch(
      /^bad setting V8_OLD_SPACE_MB/,
    );
    // A bound is a hard stop; one under the server's working heap would end it at once.
    for (const raw of ['1', '127'])
      expect(serverNodeFlags({ V8_OLD_SPACE_MB: raw }).error).toBe(
        `bad setting V8_OLD_SPACE_MB: expected 0 or an integer from 128 to 1048576, got "${raw}"`,
      );
    expect(serverNodeFlags({ V8_OLD_SPACE_MB: '0' })).toEqual({
      flags: ['--max-semi-space-size=4', '--heap-growing-percent=20'],
    });
    expect(serverNodeFlags({ V8_OLD_SPACE_MB: '128' }).flags).toContain('--max-old-space-size=128');
  });

  it('leaves a flag that node is already given to it', () => {
    const growing = '--heap-growing-percent=20';
    expect(serverNodeFlags({}, ['--max-semi-space-size=32'])).toEqual({ flags: [growing] });
    expect(serverNodeFlags({}, ['--max_semi_space_size=32'])).toEqual({ flags: [growing] });
    expect(serverNodeFlags({}, ['--heap_growing_percent=0'])).toEqual({
      flags: ['--max-semi-space-size=4'],
    });
    expect(
      serverNodeFlags({ V8_OLD_SPACE_MB: '256', NODE_OPTIONS: '--max-semi-space-size=1' }),
    ).toEqual({ flags: ['--max-old-space-size=256', growing] });
  });
});

/** A process and all its descendants, parents first, with their command lines. */
function processTree(pid: number): { pid: number; command: string }[] {
  const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');
  const children = read(`/proc/${pid}/task/${pid}/children`).split(' ').filter(Boolean);
  return [
    { pid, command: read(`/proc/${pid}/cmdline`).split('\0').join(' ') },
    ...children.flatMap((child) => processTree(Number(child))),
  ];
}

describe('bin/pal.js serve', () => {
  const dir = tempDir('pal-flags-');
  afterAll(() => dir.remove());
  const env = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? '',
    DATA_DIR: join(dir.path, 'data'),
    PORT: '0',
    LOG_LEVEL: 'info',
    ...extra,
  });

  it('refuses a bad setting before it starts', async () => {
    const run = await new Promise<{ code: number | null; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [bin, 'serve'],
        { env: env({ V8_SEMI_SPACE_MB: 'big' }), timeout: 20_000 },
        (e, _o, stderr) => done({ code: e ? (e.code as number) : 0, stderr }),
      ),
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: bad setting V8_SEMI_SPACE_MB');
  });

  it('serves with the flags of its settings', async () => {
    const child = spawn(process.execPath, [bin, 'serve'], {
      env: env({ V8_OLD_SPACE_MB: '700' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((done) => child.once('exit', done));
    try {
      await new Promise<void>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no "listening" in: ${output}`)), 60_000);
        child.stdout.on('data', () => {
          if (!output.includes('Server listening at')) return;
          clearTimeout(timer);
          done();
        });
      });
      // The bin's own process, started again with the flags.
      const commands = processTree(child.pid!).map((p) => p.command);
      expect(commands).toHaveLength(1);
      expect(commands[0]).toMatch(
        /--max-semi-space-size=4 --max-old-space-size=700 --heap-growing-percent=20 /,
      );
    } finally {
      for (const { pid } of processTree(child.pid!).reverse()) process.kill(pid, 'SIGTERM');
      await exited;
    }
  }, 120_000);

  /** The bin beside the sources and without dist/, as a fresh clone has it. */
  function unbuiltClone(): string {
    const clone = join(dir.path, 'unbuilt');
    if (existsSync(clone)) return clone;
    mkdirSync(join(clone, 'bin'), { recursive: true });
    for (const file of ['bin/pal.js', 'bin/node-flags.js', 'package.json'])
      copyFileSync(join(serverDir, file), join(clone, file));
    symlinkSync(join(serverDir, 'src'), join(clone, 'src'));
    return clone;
  }

  /**
   * Serves from an unbuilt clone (`nodeArgs` before the bin), then sends the bin SIGTERM: what ran
   * (the process tree while serving), how the bin ended, and whether anything still answers.
   */
  async function serveUnbuiltThenTerminate(nodeArgs: string[], name: string) {
    const bin = join(unbuiltClone(), 'bin/pal.js');
    // From apps/server, where `--import tsx` resolves.
    const child = spawn(process.execPath, [...nodeArgs, bin, 'serve'], {
      cwd: serverDir,
      env: env({ DATA_DIR: join(dir.path, `${name}-data`) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((done) =>
      child.once('exit', (code, signal) => done(signal ?? code)),
    );
    let tree: { pid: number; command: string }[] = [];
    try {
      const url = await new Promise<string>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no "listening" in: ${output}`)), 90_000);
        child.stdout.on('data', () => {
          const listening = /Server listening at (http:\/\/[^"\s]+)/.exec(output);
          if (!listening) return;
          clearTimeout(timer);
          done(listening[1]!);
        });
      });
      tree = processTree(child.pid!);
      const healthy = (await fetch(`${url}/healthz`)).status;
      child.kill('SIGTERM');
      const ended = await Promise.race([
        exited,
        new Promise((done) => setTimeout(() => done('still running after 20 s'), 20_000)),
      ]);
      const stillServing = await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      );
      return { commands: tree.map((p) => p.command), healthy, ended, stillServing };
    } finally {
      // Whatever a failed run left (the bin's child, before this was mended, kept serving).
      for (const { pid } of [...tree].reverse())
        if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
    }
  }

  it('runs the sources of a clone not built yet in its own process, which SIGTERM stops', async () => {
    const run = await serveUnbuiltThenTerminate(['--stack-size=2000'], 'execve');
    expect(run.healthy).toBe(200);
    // One process: node started again with the node options it was given and the flags.
    expect(run.commands).toHaveLength(1);
    expect(run.commands[0]).toMatch(
      /--stack-size=2000 --max-semi-space-size=4 --heap-growing-percent=20 --import tsx .*src\/main\.ts serve/,
    );
    expect(run.ended).toBe(0);
    expect(run.stillServing).toBe(false);
  }, 120_000);

  it('without process.execve, passes SIGTERM on to the server it runs, and ends as it did', async () => {
    const withoutExecve = 'data:text/javascript,delete process.execve';
    const run = await serveUnbuiltThenTerminate(['--import', withoutExecve], 'spawn');
    expect(run.healthy).toBe(200);
    expect(run.commands).toHaveLength(2);
    expect(run.commands[1]).toMatch(/--import tsx .*src\/main\.ts serve/);
    // The server shut down on the signal and exited 0; the bin exits with that.
    expect(run.ended).toBe(0);
    expect(run.stillServing).toBe(false);
  }, 120_000);
});
