/**
 * One side of a diff: the contract in a folder that holds `schemas/`, read by the generator's
 * own loaders into its schema and operation models, plus the bundled OpenAPI document.
 */
import {
  defaultContext,
  Diagnostics,
  emitOpenApiBundle,
  loadApi,
  loadXsdFiles,
  type OperationModel,
  type SchemaModel,
} from '@pal-workflow/codegen';
import { firstLine } from './base.js';
import { ContractInputError } from './input-error.js';

export interface Contract {
  model: SchemaModel;
  operations: OperationModel[];
  /** The bundled OpenAPI document (operations + components from the XSDs). */
  openapi: Record<string, unknown>;
}

/** `label` names the side in errors: `base main`, `the work tree`. */
export function loadContract(root: string, label: string): Contract {
  const ctx = defaultContext(root);
  const diagnostics = new Diagnostics();
  try {
    const model = loadXsdFiles(
      ctx.xsdFiles.map((f) => `${root}/${f}`),
      diagnostics,
    );
    const api = diagnostics.hasUnreadableFile
      ? undefined
      : loadApi(`${root}/${ctx.openapiFile}`, model, diagnostics);
    const errors = diagnostics.items.filter((d) => d.severity === 'error');
    if (errors.length || !api) {
      const [first] = errors;
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new ContractInputError(
        `the schemas of ${label} do not load: ${first!.code} ${first!.location}: ${first!.message}${more}`,
      );
    }
    const openapi = emitOpenApiBundle(api, model).document;
    return { model, operations: api.operations, openapi };
  } catch (e) {
    if (e instanceof ContractInputError) throw e;
    throw new ContractInputError(`the schemas of ${label} do not load: ${firstLine(e)}`);
  }
}
