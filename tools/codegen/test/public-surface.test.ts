/**
 * The published packages' entry points name what they export (no `export *`), so a change of the
 * public surface shows in review; these checks keep the lists honest against what the generator
 * emits, and the client's data types are the types package's own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../src/context.js';
import { ALL_PUBLIC, namesNotYetPublic, publicModules } from '../src/public-names.js';

const PACKAGES = ['types', 'validators', 'server-skeleton', 'client'] as const;

const src = (name: string, file = 'index.ts') =>
  join(REPOSITORY_ROOT, 'packages', name, 'src', file);

const program = ts.createProgram(
  PACKAGES.map((name) => src(name)),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: ['@pal-workflow/source'],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  },
);
const checker = program.getTypeChecker();

function exportsOf(file: string): ts.Symbol[] {
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`not in the program: ${file}`);
  return checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);
}

/** The file that declares an exported name, through any re-exports. */
function declaredIn(symbol: ts.Symbol): string {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  return relative(REPOSITORY_ROOT, target.declarations![0]!.getSourceFile().fileName);
}

describe('public surface', () => {
  it.each(PACKAGES)('packages/%s/src/index.ts names every export', (name) => {
    expect(readFileSync(src(name), 'utf8')).not.toMatch(/^export \*/m);
  });

  it('the generator finds no name waiting to be made public, as the compiler does not', () => {
    expect(namesNotYetPublic(REPOSITORY_ROOT)).toEqual([]);
  });

  it('the generator names what an entry point leaves out, by its package', () => {
    const root = mkdtempSync(join(tmpdir(), 'public-names-'));
    try {
      mkdirSync(join(root, 'packages/types/src/generated'), { recursive: true });
      writeFileSync(
        join(root, 'packages/types/src/index.ts'),
        "export type { Named } from './generated/types.gen.js';\n",
      );
      writeFileSync(
        join(root, 'packages/types/src/generated/types.gen.ts'),
        'export interface Named {}\nexport interface NamedTwice {}\nexport enum Kind { A = "A" }\n',
      );
      expect(namesNotYetPublic(root)).toEqual([
        'packages/types/src/index.ts: NamedTwice',
        'packages/types/src/index.ts: Kind',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.each(PACKAGES)('packages/%s exports every type, schema or API it generates', (name) => {
    const exported = new Set(exportsOf(src(name)).map((s) => s.name));
    const modules = ALL_PUBLIC[name].flatMap((p) => publicModules(REPOSITORY_ROOT, name, p));
    if (name === 'client') expect(modules).toHaveLength(5);
    const missing = modules.flatMap((file) =>
      exportsOf(src(name, file))
        .map((s) => s.name)
        .filter((n) => !exported.has(n))
        .map((n) => `${file}: ${n}`),
    );
    expect(missing).toEqual([]);
  });

  it('the client has no models of its own: its data types are @pal-workflow/types', () => {
    const types = new Set(exportsOf(src('types')).map((s) => s.name));
    const shared = exportsOf(src('client')).filter((s) => types.has(s.name));
    expect(shared.map((s) => s.name)).toEqual(expect.arrayContaining(['PalInfo', 'FieldType']));
    const elsewhere = shared
      .map((s) => `${s.name}: ${declaredIn(s)}`)
      .filter((line) => !line.includes('packages/types/src/generated/types.gen.ts'));
    expect(elsewhere).toEqual([]);
    // No openapi-generator model or inline form model is public.
    expect(
      exportsOf(src('client'))
        .map((s) => s.name)
        .filter((n) => /^InlineObject|(From|To)JSON$/.test(n)),
    ).toEqual([]);
  });
});
