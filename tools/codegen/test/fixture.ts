/** A throwaway copy of a fixture repository, so tests can change its schemas freely. */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultContext, type GenerateContext } from '../src/context.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures');

export interface Fixture {
  ctx: GenerateContext;
  read(path: string): string;
  edit(path: string, change: (text: string) => string): void;
  dispose(): void;
}

export function copyFixture(name: string): Fixture {
  const root = mkdtempSync(join(tmpdir(), `codegen-${name}-`));
  cpSync(join(FIXTURES, name), root, { recursive: true });
  const ctx: GenerateContext = {
    ...defaultContext(root),
    xsdFiles: ['schemas/xsd/mini.xsd'],
    openapiFile: 'schemas/openapi/operations.yaml',
  };
  return {
    ctx,
    read: (path) => readFileSync(join(root, path), 'utf8'),
    edit: (path, change) =>
      writeFileSync(join(root, path), change(readFileSync(join(root, path), 'utf8'))),
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}
