/** Options of a generator run, normalised once with every default written out. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface GenerateContext {
  /** Repository root; every other path is relative to it. */
  root: string;
  xsdFiles: string[];
  openapiFile: string;
  /** Output folders, each rewritten whole by its emitter. */
  out: {
    types: string;
    validators: string;
    skeleton: string;
    client: string;
  };
  /** Java and the openapi-generator JAR that @openapitools/openapi-generator-cli@1.0.18-4.3.1 ships. */
  java: string;
  openapiGeneratorJar: string;
}

export const REPOSITORY_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export function defaultContext(root: string = REPOSITORY_ROOT): GenerateContext {
  return {
    root,
    xsdFiles: ['schemas/xsd/pal.xsd', 'schemas/xsd/services.xsd'],
    openapiFile: 'schemas/openapi/operations.yaml',
    out: {
      types: 'packages/types/src/generated',
      validators: 'packages/validators/src/generated',
      skeleton: 'packages/server-skeleton/src/generated',
      client: 'packages/client/src/generated',
    },
    java: process.env.JAVA ?? 'java',
    openapiGeneratorJar: resolve(
      REPOSITORY_ROOT,
      'node_modules/@openapitools/openapi-generator-cli/bin/openapi-generator.jar',
    ),
  };
}

export function abs(ctx: GenerateContext, path: string): string {
  return resolve(ctx.root, path);
}
