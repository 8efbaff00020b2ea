/**
 * The architecture reads schemas → tools → packages → apps, and the code keeps to it, in every
 * workspace: packages depend only on the packages below them, nothing depends on an app but the
 * bench that measures it, only tools read schemas/, no relative import leaves its workspace, and
 * every package a workspace imports is declared (nx's module-boundary lint rule needs nx plugins
 * this registry does not have).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../src/context.js';

// What each published package may use at run time.
const ALLOWED: Record<string, string[]> = {
  types: [],
  validators: ['@pal-workflow/types'],
  'server-skeleton': ['@pal-workflow/types', '@pal-workflow/validators'],
  client: ['@pal-workflow/types', '@pal-workflow/validators'],
};

// The only workspace that may depend on an app: it benchmarks the server in-process.
const APP_DEPENDENTS = ['tools/bench'];

// Sources that are not the workspace's own: tools/pack-smoke copies this folder into a fresh
// project of its own, which installs the packed tarballs.
const OTHER_PROJECTS = ['tools/pack-smoke/src/consumer'];

// Files at the root that every workspace's configuration may import.
const SHARED_CONFIG = ['vitest.shared.ts'];

type Manifest = {
  name: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(REPOSITORY_ROOT, dir, 'package.json'), 'utf8')) as Manifest;
}

/** Every workspace of the root package.json (a folder its globs name that has a package.json). */
const WORKSPACES: string[] = (manifest('.').workspaces ?? []).flatMap((glob) => {
  const parent = glob.replace(/\/\*$/, '');
  return readdirSync(join(REPOSITORY_ROOT, parent))
    .map((name) => `${parent}/${name}`)
    .filter((dir) => existsSync(join(REPOSITORY_ROOT, dir, 'package.json')));
});

const declared = (m: Manifest) =>
  new Set(Object.keys({ ...m.dependencies, ...m.devDependencies, ...m.peerDependencies }));

/** TypeScript sources of a folder, without node_modules, build output and other projects. */
function sources(dir: string, withTests = true): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    if (OTHER_PROJECTS.includes(relative(REPOSITORY_ROOT, d))) return;
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      // Snapshots are texts of generated files for another layout, not this workspace's code.
      if (['node_modules', 'dist', '__snapshots__'].includes(name) || name.startsWith('.'))
        continue;
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.ts') && (withTests || !name.endsWith('.test.ts'))) out.push(full);
    }
  };
  const root = join(REPOSITORY_ROOT, dir);
  if (existsSync(root)) walk(root);
  return out;
}

/** The module specifiers a file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  return ts
    .preProcessFile(readFileSync(file, 'utf8'), true, true)
    .importedFiles.map((f) => f.fileName);
}

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(packageOf(specifier));

/** Lines of code, without comments (generated headers name their schemas in a comment). */
function codeLines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line));
}

describe('module boundaries', () => {
  it('finds every workspace', () => {
    expect(WORKSPACES).toEqual(
      expect.arrayContaining([
        'apps/server',
        'packages/client',
        'packages/types',
        'tools/bench',
        'tools/codegen',
        'tools/test-support',
      ]),
    );
    expect(WORKSPACES.filter((w) => w.startsWith('packages/')).sort()).toEqual(
      Object.keys(ALLOWED)
        .map((name) => `packages/${name}`)
        .sort(),
    );
  });

  it.each(Object.keys(ALLOWED))('packages/%s depends only on the packages below it', (name) => {
    const own = Object.keys(manifest(`packages/${name}`).dependencies ?? {}).filter((d) =>
      d.startsWith('@pal-workflow/'),
    );
    expect(own.filter((d) => !ALLOWED[name]!.includes(d))).toEqual([]);
  });

  it.each(Object.keys(ALLOWED))(
    'packages/%s/src imports no app, tool or package above it',
    (name) => {
      const offending = sources(`packages/${name}/src`, false).flatMap((file) =>
        importsOf(file)
          .filter(
            (spec) =>
              /apps\/|tools\//.test(spec) ||
              (spec.startsWith('@pal-workflow/') && !ALLOWED[name]!.includes(packageOf(spec))),
          )
          .map((spec) => `${relative(REPOSITORY_ROOT, file)}: ${spec}`),
      );
      expect(offending).toEqual([]);
    },
  );

  it.each(WORKSPACES)('%s: no relative import leaves the workspace', (workspace) => {
    const root = join(REPOSITORY_ROOT, workspace);
    const offending = sources(workspace).flatMap((file) =>
      importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => ({ spec, target: resolve(dirname(file), spec) }))
        .filter(({ target }) => relative(root, target).startsWith('..'))
        .filter(({ target }) => !SHARED_CONFIG.includes(relative(REPOSITORY_ROOT, target)))
        .map(({ spec }) => spec)
        .map((spec) => `${relative(REPOSITORY_ROOT, file)}: ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it.each(WORKSPACES)(
    '%s: every package it imports is declared (its own manifest, or the root tooling)',
    (workspace) => {
      const own = declared(manifest(workspace));
      const root = declared(manifest('.'));
      const offending = sources(workspace).flatMap((file) =>
        importsOf(file)
          .filter((spec) => !spec.startsWith('.') && !isBuiltin(spec))
          .map(packageOf)
          .filter((name) =>
            // Workspace packages must be the workspace's own declared dependency.
            name.startsWith('@pal-workflow/') ? !own.has(name) : !own.has(name) && !root.has(name),
          )
          .map((name) => `${relative(REPOSITORY_ROOT, file)}: ${name}`),
      );
      expect([...new Set(offending)]).toEqual([]);
    },
  );

  it('nothing outside tools/ reads schemas/ at run time', () => {
    const offending = WORKSPACES.filter((w) => !w.startsWith('tools/'))
      .flatMap((w) => sources(`${w}/src`, false))
      .filter((file) =>
        codeLines(file).some((line) => /['"`][^'"`]*schemas\/(xsd|openapi)/.test(line)),
      )
      .map((file) => relative(REPOSITORY_ROOT, file));
    expect(offending).toEqual([]);
  });

  it('nothing depends on an app, but the bench', () => {
    const apps = WORKSPACES.filter((w) => w.startsWith('apps/')).map((w) => manifest(w).name);
    const dependents = WORKSPACES.filter((w) => apps.some((app) => declared(manifest(w)).has(app)));
    expect(dependents).toEqual(APP_DEPENDENTS);
  });
});
