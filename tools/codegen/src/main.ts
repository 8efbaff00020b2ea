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
    console.log(`Done in ${ms} ms.`);
    return 0;
  } catch (e) {
    console.error(e instanceof GenerationError ? e.message : e);
    return 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
