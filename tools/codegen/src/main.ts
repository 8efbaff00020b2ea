/**
 * `npm run generate [-- --check]`: load the schemas into one model, run every
 * emitter, and write (or check) packages/<name>/src/generated/.
 */
import { performance } from 'node:perf_hooks';
import { abs, defaultContext, type GenerateContext } from './context.js';
import { Diagnostics, GenerationError } from './diagnostics.js';
import { loadApi } from './load/openapi.js';
import { loadXsdFiles } from './load/xsd.js';
import { emitClient } from './emit/client.js';
import { emitOpenApiBundle } from './emit/openapi-bundle.js';
import { emitSkeleton } from './emit/skeleton.js';
import { emitTypes } from './emit/types.js';
import { emitValidators } from './emit/validators.js';
import { namesNotYetPublic } from './public-names.js';
import { writeOutputs, type EmittedFile, type WriteResult } from './write.js';

export interface GenerateOptions {
  check?: boolean;
  /** Skip the Java client generator (for fast generator tests). */
  skipClient?: boolean;
}

export async function generate(
  ctx: GenerateContext,
  options: GenerateOptions = {},
): Promise<{ result: WriteResult; diagnostics: Diagnostics; files: EmittedFile[] }> {
  const diagnostics = new Diagnostics();
  const model = loadXsdFiles(
    ctx.xsdFiles.map((f) => abs(ctx, f)),
    diagnostics,
  );
  if (diagnostics.hasUnreadableFile) throw new GenerationError(diagnostics);
  const api = loadApi(abs(ctx, ctx.openapiFile), model, diagnostics);
  if (diagnostics.hasErrors) throw new GenerationError(diagnostics);
  const bundle = emitOpenApiBundle(api, model);
  if (ctx.contractVersion)
    bundle.document.info = { ...(bundle.document.info as object), version: ctx.contractVersion };
  const files = [
    ...emitTypes(ctx, model, diagnostics),
    ...emitValidators(ctx, model),
    ...emitSkeleton(ctx, api, bundle),
    ...(options.skipClient ? [] : emitClient(ctx, bundle.document, api)),
  ];
  if (diagnostics.hasErrors) throw new GenerationError(diagnostics);
  const folders = [
    ctx.out.types,
    ctx.out.validators,
    ctx.out.skeleton,
    ...(options.skipClient ? [] : [ctx.out.client]),
  ];
  const result = await writeOutputs(ctx.root, folders, files, options.check ?? false);
  return { result, diagnostics, files };
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const verbose = argv.includes('--verbose');
  const started = performance.now();
  try {
    const { result, diagnostics } = await generate(defaultContext(), { check });
    if (verbose) console.log(diagnostics.format());
    const ms = Math.round(performance.now() - started);
    if (check) {
      if (result.stale.length) {
        console.error(
          `Generated code is stale. Run \`npm run generate\`. Stale files:\n${result.stale.map((s) => `  ${s}`).join('\n')}`,
        );
        return 1;
      }
      console.log(`Generated code is current (${ms} ms).`);
      return 0;
    }
    const changed = [
      ...result.written.map((p) => `  wrote ${p}`),
      ...result.deleted.map((p) => `  deleted ${p}`),
    ];
    console.log(changed.length ? changed.join('\n') : 'Generated code was already current.');
    const waiting = namesNotYetPublic(defaultContext().root);
    if (waiting.length)
      console.log(
        `Not public yet: name each in its package's entry point (the code that uses it across packages does not compile until then):\n${waiting.map((w) => `  ${w}`).join('\n')}`,
      );
    console.log(`Done in ${ms} ms.`);
    return 0;
  } catch (e) {
    console.error(e instanceof GenerationError ? e.message : failureText(e, verbose));
    return 1;
  }
}

/**
 * What a failure that is no schema problem prints (a bug, or Java's client generator stopping):
 * what failed in one line, a child process's stderr as text without its stack frames, and the
 * stack only with --verbose. Never the error object itself: a child's output in it prints as
 * Buffer bytes.
 */
export function failureText(error: unknown, verbose = false): string {
  if (!(error instanceof Error)) return `generate failed: ${String(error)}`;
  const child = error as Error & {
    code?: string;
    path?: string;
    status?: number | null;
    stderr?: unknown;
  };
  if (child.code === 'ENOENT' && child.path)
    return `generate failed: ${child.path} was not found (the client generator needs Java 17: install it, or set JAVA to its path)`;
  const stderr = Buffer.isBuffer(child.stderr)
    ? child.stderr.toString('utf8')
    : typeof child.stderr === 'string'
      ? child.stderr
      : undefined;
  if (stderr !== undefined) {
    const [command] = child.message.split('\n');
    // Java's and Node's stack frames say where in the tool, not what is wrong.
    const said = [
      ...new Set(
        stderr
          .split('\n')
          .map((line) => line.trimEnd())
          .filter((line) => line.trim() && !/^\s+at |^\s*\.\.\. \d+ more$/.test(line)),
      ),
    ];
    return [
      `generate failed: ${command}${child.status == null ? '' : ` (exit status ${child.status})`}`,
      ...said.map((line) => `  ${line}`),
    ].join('\n');
  }
  return verbose && error.stack
    ? `generate failed unexpectedly: ${error.stack}`
    : `generate failed unexpectedly: ${error.message}\n(npm run generate -- --verbose prints the stack)`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
