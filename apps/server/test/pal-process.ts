// How tests run the `pal` bin as a real process, as an operator or a node runs it:
// - `runPal`: one CLI command (tsx on src/main.ts) in a clean environment, its exit code and output;
// - `startKillableNode`: `pal serve` as one node process with tsx as its loader, so that a signal
//   sent to the child reaches the server itself. (The tsx CLI would run the server in a
//   grandchild: `kill -9` of the CLI leaves the server running, orphaned.)
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort } from '@pal-workflow/test-support';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const examples = resolve(serverDir, '../../examples/pals');
const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** `node` arguments before the command's own: `[...palNodeArgs, 'serve']`, cwd apps/server. */
export const palNodeArgs = [
  '--import',
  tsxLoader,
  '--conditions=@pal-workflow/source',
  'src/main.ts',
];

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** node's arguments for `pal …args`: tsx's CLI on src/main.ts. */
const cliArgs = (args: string[]) => [
  tsxCli,
  '--conditions=@pal-workflow/source',
  'src/main.ts',
  ...args,
];

/** Only `env` (and PATH, for node itself), and an end to a command that serves instead. */
const cliOptions = (env: Record<string, string>) => ({
  cwd: serverDir,
  env: { PATH: process.env.PATH ?? '', ...env },
  timeout: 120_000,
});

/** Runs `pal …args` with only `env` (and PATH, for node itself) set; never rejects. */
export function runPal(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      cliArgs(args),
      // A command that should end but serves instead (a refusal that regressed) is ended.
      cliOptions(env),
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Runs `pal …args` whose reader has gone before it writes (`pal … | head` once head is done). */
export function palWithClosedStdout(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, cliArgs(args), cliOptions(env));
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stderr }));
  });
}

/** `pal …args --json`, expected to succeed: its one JSON object. */
export async function palJson(
  env: Record<string, string>,
  ...args: string[]
): Promise<Record<string, string>> {
  const run = await runPal(env, ...args, '--json');
  if (run.code !== 0) throw new Error(`pal ${args.join(' ')} failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, string>;
}

/** PAL_CRASH_ROUNDS: the kill -9 tests' rounds; more (or fewer, to try a change quickly) than ten. */
export const CRASH_ROUNDS = Number(process.env.PAL_CRASH_ROUNDS ?? 10);

export interface KillableNode {
  url: string;
  child: ChildProcess;
  exited: Promise<unknown>;
}

/** Starts `pal serve` on a free port, its output ignored; resolves once /healthz answers. */
export async function startKillableNode(env: Record<string, string>): Promise<KillableNode> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...palNodeArgs, 'serve'], {
    cwd: serverDir,
    env: { ...env, PORT: String(port) },
    stdio: 'ignore',
  });
  const exited = new Promise((done) => child.once('exit', done));
  for (let i = 0; ; i++) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 300) {
      child.kill('SIGKILL');
      throw new Error('the node did not start');
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return { url, child, exited };
}

/** Kills the node with SIGKILL and waits until it is gone; true when its port no longer answers. */
export async function killNode(node: KillableNode): Promise<boolean> {
  node.child.kill('SIGKILL');
  await node.exited;
  return fetch(`${node.url}/healthz`).then(
    () => false,
    () => true,
  );
}

/** How long a writer waits for an answer before it counts the request as never answered. */
export const WRITE_ANSWER_TIMEOUT_MS = 20_000;

export interface T1Writers {
  /** Requests that got no answer at all within WRITE_ANSWER_TIMEOUT_MS (not a refused or reset one). */
  readonly unanswered: number;
  stop(): Promise<void>;
}

/**
 * `count` callers creating transactions (T1) at `url` as fast as it answers, until `stop()`: each
 * id answered with 200 is pushed to `acknowledged`; a connection that dies with its node is not.
 */
export function startT1Writers(
  { url }: { url: string },
  authorization: string,
  palId: string,
  count: number,
  acknowledged: string[],
): T1Writers {
  let stopped = false;
  let unanswered = 0;
  const writer = async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${url}/services/rest/transactions`, {
          method: 'POST',
          headers: { authorization, accept: 'text/plain' },
          body: new URLSearchParams({ palId }),
          signal: AbortSignal.timeout(WRITE_ANSWER_TIMEOUT_MS),
        });
        const text = await response.text();
        if (response.status === 200) acknowledged.push(text);
      } catch (error) {
        // A connection that died with its node is not acknowledged; one left open is worse.
        if ((error as Error).name === 'TimeoutError') unanswered++;
      }
    }
  };
  const writers = Array.from({ length: count }, writer);
  return {
    get unanswered() {
      return unanswered;
    },
    async stop() {
      stopped = true;
      await Promise.all(writers);
    },
  };
}

/**
 * Through the CLI: the enterprise `Crash`, an API client of it and the example pal
 * `expense-approval` deployed; the client's BASIC `Authorization` header.
 */
export async function crashEnterprise(env: Record<string, string>): Promise<string> {
  await palJson(env, 'enterprise', 'create', 'Crash');
  const client = await palJson(env, 'client', 'create', '--enterprise', 'Crash');
  await palJson(env, 'pal', 'deploy', join(examples, 'expense-approval'), '--enterprise', 'Crash');
  return `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
}
