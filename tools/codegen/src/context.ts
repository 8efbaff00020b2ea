/** Options of a generator run, normalised once with every default written out. */
import { existsSync, readFileSync } from 'node:fs';
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
  /**
   * The published packages' shared version (changesets `fixed` group), written into the bundled
   * OpenAPI's `info.version` so the document a server serves names the contract it implements.
   * Unset (fixture repositories without packages/types) keeps the hand-written value.
   */
  contractVersion?: string;
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
    ...packagesVersion(root),
  };
}

/** The version of @pal-workflow/types: `changeset version` moves all four packages together. */
function packagesVersion(root: string): { contractVersion?: string } {
  const manifest = resolve(root, 'packages/types/package.json');
  if (!existsSync(manifest)) return {};
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string };
  return version ? { contractVersion: version } : {};
}

export function abs(ctx: GenerateContext, path: string): string {
  return resolve(ctx.root, path);
}
