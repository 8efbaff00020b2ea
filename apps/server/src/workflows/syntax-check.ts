// A pal whose workflow module does not compile, or imports a file the pal does not have, is
// refused at deploy time with `FILE:LINE: message` for each such file (FILE as the pal folder was
// given, LINE the line of the error or of the import), instead of failing at its first run.
import { join, posix } from 'node:path';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { InvalidArgumentError } from '../domain/errors.js';
import { importLine } from './module-exports.js';
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

/**
 * Compiles each file as an ES module (without running it); throws WorkflowSyntaxError naming each
 * problem as `FOLDER/FILE:LINE: message`, FOLDER as the pal folder was given (empty: the paths as
 * the manifest has them).
 */
export async function checkWorkflowSyntax(
  files: Record<string, string>,
  folder = '',
): Promise<void> {
  const problems = await workflowSyntaxProblems(files, folder);
  if (problems.length > 0) throw new WorkflowSyntaxError(problems.join('\n'));
}

/** The problems checkWorkflowSyntax reports, one a line; empty when every module compiles. */
export async function workflowSyntaxProblems(
  files: Record<string, string>,
  folder = '',
): Promise<string[]> {
  const quickjs = await (compiler ??= loadSandboxModule(64 * 1024 * 1024));
  // A file that does not compile is reported once, however many others import it.
  const problems = new Set<string>();
  const sources = new Map(
    Object.entries(files).map(([path, text]) => [posix.normalize(path), text]),
  );
  const where = (path: string, line?: number) =>
    `${folder === '' ? path : join(folder, path)}${line === undefined ? '' : `:${line}`}`;
  // Who last asked for each module name, and as what: a missing import is reported at the line
  // of the import, in the file that has it (QuickJS's error names neither). The last: the module
  // being compiled asks anew, and two modules that import one missing file are two problems.
  const importers = new Map<string, { base: string; requested: string }>();
  let missing: string | undefined;
  const runtime = quickjs.newRuntime();
  // Compiling a module links its static imports, so they must name files of the pal.
  const compile: LoaderCompile = { ended: false };
  runtime.setModuleLoader(
    (name) => {
      const found = endOfCompile(name, compile) ?? sources.get(name);
      if (found !== undefined) return found;
      missing = name;
      return { error: new Error(missingModule(name, (path) => sources.has(path))) };
    },
    (base, requested) => {
      const name = normalizeModuleName(base, requested);
      importers.set(name, { base, requested });
      return name;
    },
  );
  const context = runtime.newContext();
  let damaged = false;
  try {
    for (const path of sources.keys()) {
      let result: ReturnType<typeof context.evalCode>;
      missing = undefined;
      try {
        result = compileThroughLoader(context, [path], compile);
      } catch (error) {
        // The host itself failed inside the module (its own stack overflowed on code nested
        // deeper than QuickJS's stack limit notices): the module is not used again.
        damaged = true;
        compiler = undefined;
        problems.add(
          isHostStackOverflow(error)
            ? `${where(path)}: the module is nested too deeply to compile`
            : `${where(path)}: the module cannot be compiled (${error instanceof Error ? error.message : String(error)})`,
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
        const importer = missing === undefined ? undefined : importers.get(missing);
        const at =
          error.lineNumber === undefined && importer && sources.has(importer.base)
            ? where(importer.base, importLine(sources.get(importer.base)!, importer.requested))
            : where(error.fileName ?? path, error.lineNumber);
        problems.add(`${at}: ${error.name ?? 'Error'}: ${error.message ?? ''}`);
      }
      result.dispose();
    }
  } finally {
    if (!damaged) {
      context.dispose();
      runtime.dispose();
    }
  }
  return [...problems];
}
