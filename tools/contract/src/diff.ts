/** The whole contract diff: XSD types, the operation model, and the bundled OpenAPI. */
import { largest, sortChanges, type DiffReport } from './change.js';
import { diffOpenApi, diffOperationModels } from './diff-operations.js';
import { diffSchema } from './diff-schema.js';
import type { Contract } from './load.js';
import { mergeUsage, usageOf } from './usage.js';

export function diffContracts(before: Contract, after: Contract): DiffReport {
  const usage = mergeUsage(
    usageOf(before.model, before.operations),
    usageOf(after.model, after.operations),
  );
  const changes = sortChanges([
    ...diffSchema(before.model, after.model, usage),
    ...diffOperationModels(before.operations, after.operations),
    ...diffOpenApi(before.openapi, after.openapi),
  ]);
  return { bump: largest(changes.map((c) => c.bump)), changes };
}
