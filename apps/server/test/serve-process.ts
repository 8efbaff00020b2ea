// `pal serve` in a process of its own, as a node runs it: what a test needs when the server must
// not share the test's event loop (a server that blocks is then seen to block), or when several
// nodes must each have their own pool and caches.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');

export interface ServerProcess {
  url: string;
  dataDir: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** What it printed so far (stdout and stderr): its log lines at the given LOG_LEVEL. */
  output(): string;
  /** SIGTERM, and the end of the process. */
  stop(): Promise<void>;
}

/** Starts `pal serve` on a free port; resolves once it listens. */
export async function serve(env: Record<string, string>, dataDir: string): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [tsxCli, '--conditions=@pal-workflow/source', 'src/main.ts', 'serve'],
    {
      cwd: serverDir,
      env: { PATH: process.env.PATH ?? '', ...env, DATA_DIR: dataDir, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`no "listening" in: ${output}`)), 60_000);
    const look = () => {
      const match = /Server listening at (http:\/\/[^"\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    };
    child.stdout!.on('data', look);
    void exited.then((code) => fail(new Error(`pal serve ended (${code}): ${output}`)));
  });
  return {
    url,
    dataDir,
    child,
    exited,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
