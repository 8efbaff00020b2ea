// `pal serve` in a process of its own, as a node runs it: what a test needs when the server must
// not share the test's event loop (a server that blocks is then seen to block), when several
// nodes must each have their own pool and caches, or when a test signals the process itself.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { palNodeArgs } from './pal-process.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));

/** The fields of pino's JSON lines that tests look for. */
export interface LogLine {
  pid?: number;
  msg?: string;
  url?: string;
  reqId?: string;
}

/** A `pal serve` process: what it printed, its log lines as they arrive, and waits on them. */
export class PalServe {
  readonly child: ChildProcess;
  /** Its exit code, once its output has been read to the end. */
  readonly exited: Promise<number | null>;
  #output = '';
  readonly #lines: LogLine[] = [];

  /** `detached`: in a process group of its own, which a test can signal as a terminal does. */
  constructor(env: Record<string, string>, detached = false) {
    // One process (tsx as a loader, not its CLI, which would run the server in a child of its
    // own): a signal sent to `child` reaches the server itself.
    this.child = spawn(process.execPath, [...palNodeArgs, 'serve'], {
      cwd: serverDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached,
    });
    this.#read(this.child.stdout!);
    this.#read(this.child.stderr!);
    // 'close', not 'exit': the output its server processes wrote last must have been read too.
    this.exited = new Promise((done) => this.child.once('close', (code) => done(code)));
  }

  /** Parses each JSON line once, as it arrives: under load the log holds thousands of them. */
  #read(stream: Readable): void {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      this.#output += text;
      const lines = (partial + text).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        // Two processes' long lines can interleave on the shared pipe: such a line is skipped,
        // not thrown in the middle of the runner.
        try {
          this.#lines.push(JSON.parse(line) as LogLine);
        } catch {
          continue;
        }
      }
    });
  }

  /** Its complete log lines so far (a line still being received is left for the next call). */
  lines(): readonly LogLine[] {
    return this.#lines;
  }

  /** Everything it printed so far, stdout and stderr. */
  output(): string {
    return this.#output;
  }

  /** What `found` returns once it is not undefined; fails after a minute or when it ends. */
  async until<T>(what: string, found: () => T | undefined): Promise<T> {
    for (let i = 0; i < 600; i++) {
      const value = found();
      if (value !== undefined) return value;
      // Ended by a signal (SIGABRT, an out-of-memory kill), it has a signalCode and no exitCode.
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        // Its last output, once read (its server processes may hold the pipes a little
        // longer: at most 5 s), may hold what was awaited, or say why not.
        const code = await Promise.race([
          this.exited,
          new Promise<null>((done) => setTimeout(() => done(null), 5000)),
        ]);
        const last = found();
        if (last !== undefined) return last;
        throw new Error(
          `no ${what}: pal serve ended (${code ?? this.child.signalCode}): ${this.#output}`,
        );
      }
      await new Promise((done) => setTimeout(done, 100));
    }
    throw new Error(`no ${what} within a minute in: ${this.#output}`);
  }

  /** SIGTERM, and the end of the process. */
  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await this.exited;
  }
}

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
  const server = new PalServe({
    PATH: process.env.PATH ?? '',
    ...env,
    DATA_DIR: dataDir,
    PORT: '0',
  });
  let url: string;
  try {
    url = await server.until(
      '"listening"',
      () => /Server listening at (http:\/\/[^"\s]+)/.exec(server.output())?.[1],
    );
  } catch (error) {
    // A server that never listened is not left running (its pipes would keep the runner alive).
    server.child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    dataDir,
    child: server.child,
    exited: server.exited,
    output: () => server.output(),
    stop: () => server.stop(),
  };
}
