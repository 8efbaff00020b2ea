// A pal whose workflow module does not compile, or imports a file the pal does not have, is
// refused at deploy time with `FILE:LINE: message` for each such file, instead of failing at its
// first run.
import { posix } from 'node:path';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { InvalidArgumentError } from '../domain/errors.js';
import {
  compileThroughLoader,
  endOfCompile,
  isHostStackOverflow,
  loadSandboxModule,
  missingModule,
  normalizeModuleName,
  type LoaderCompile,
} from './sandbox.js';

let compiler: Promise<QuickJSWASMModule> | undefined;

export class WorkflowSyntaxError extends InvalidArgumentError {
  override readonly name = 'WorkflowSyntaxError';
}

/** Compiles each file as an ES module (without running it); throws WorkflowSyntaxError. */
export async function checkWorkflowSyntax(files: Record<string, string>): Promise<void> {
  const quickjs = await (compiler ??= loadSandboxModule(64 * 1024 * 1024));
  // A file that does not compile is reported once, however many others import it.
  const problems = new Set<string>();
  const sources = new Map(
    Object.entries(files).map(([path, text]) => [posix.normalize(path), text]),
  );
  const runtime = quickjs.newRuntime();
  // Compiling a module links its static imports, so they must name files of the pal.
  const compile: LoaderCompile = { ended: false };
  runtime.setModuleLoader(
    (name) =>
      endOfCompile(name, compile) ??
      sources.get(name) ?? {
        error: new Error(missingModule(name, (path) => sources.has(path))),
      },
    normalizeModuleName,
  );
  const context = runtime.newContext();
  let damaged = false;
  try {
    for (const path of sources.keys()) {
      let result: ReturnType<typeof context.evalCode>;
      try {
        result = compileThroughLoader(context, [path], compile);
      } catch (error) {
        // The host itself failed inside the module (its own stack overflowed on code nested
        // deeper than QuickJS's stack limit notices): the module is not used again.
        damaged = true;
        compiler = undefined;
        problems.add(
          isHostStackOverflow(error)
            ? `${path}:0: the module is nested too deeply to compile`
            : `${path}:0: the module cannot be compiled (${error instanceof Error ? error.message : String(error)})`,
        );
        break;
      }
      if (!compile.ended && result.error) {
        // The module that failed may be one `path` imports: the error names its file.
        const error = context.dump(result.error) as {
          name?: string;
          message?: string;
          fileName?: string;
          lineNumber?: number;
        };
        problems.add(
          `${error.fileName ?? path}:${error.lineNumber ?? 0}: ${error.name ?? 'Error'}: ${error.message ?? ''}`,
        );
      }
      result.dispose();
    }
  } finally {
    if (!damaged) {
      context.dispose();
      runtime.dispose();
    }
  }
  if (problems.size > 0) throw new WorkflowSyntaxError([...problems].join('\n'));
}
