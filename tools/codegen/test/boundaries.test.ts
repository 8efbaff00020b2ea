/**
 * The architecture reads schemas → tools → packages → apps, and the code keeps to it:
 * packages depend only on packages below them, nothing depends on apps, and only tools read
 * schemas/ (nx's module-boundary lint rule needs nx plugins this registry does not have).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../src/context.js';

// What each published package may use at run time.
const ALLOWED: Record<string, string[]> = {
  types: [],
  validators: ['@pal-workflow/types'],
  'server-skeleton': ['@pal-workflow/types', '@pal-workflow/validators'],
  client: ['@pal-workflow/types', '@pal-workflow/validators'],
};

function manifest(dir: string): { dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(REPOSITORY_ROOT, dir, 'package.json'), 'utf8')) as never;
}

function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(full);
    }
  };
  walk(join(REPOSITORY_ROOT, dir));
  return out;
}

/** Lines of code, without comments (generated headers name their schemas in a comment). */
function codeLines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line));
}

describe('module boundaries', () => {
  it.each(Object.keys(ALLOWED))('packages/%s depends only on the packages below it', (name) => {
    const own = Object.keys(manifest(`packages/${name}`).dependencies ?? {}).filter((d) =>
      d.startsWith('@pal-workflow/'),
    );
    expect(own.filter((d) => !ALLOWED[name]!.includes(d))).toEqual([]);
  });

  it.each(Object.keys(ALLOWED))(
    'packages/%s/src imports no app, tool or package above it',
    (name) => {
      const offending: string[] = [];
      for (const file of sources(`packages/${name}/src`)) {
        for (const line of codeLines(file)) {
          const spec = /from '([^']+)'/.exec(line)?.[1];
          if (!spec) continue;
          const bad =
            /apps\/|tools\//.test(spec) ||
            (spec.startsWith('@pal-workflow/') && !ALLOWED[name]!.includes(spec));
          if (bad) offending.push(`${relative(REPOSITORY_ROOT, file)}: ${spec}`);
        }
      }
      expect(offending).toEqual([]);
    },
  );

  it('nothing outside tools/ reads schemas/ at run time', () => {
    const offending = [
      'packages/types/src',
      'packages/validators/src',
      'packages/server-skeleton/src',
      'packages/client/src',
      'apps/server/src',
    ]
      .flatMap(sources)
      .filter((file) =>
        codeLines(file).some((line) => /['"`][^'"`]*schemas\/(xsd|openapi)/.test(line)),
      )
      .map((file) => relative(REPOSITORY_ROOT, file));
    expect(offending).toEqual([]);
  });

  it('nothing depends on the app', () => {
    const dependents = [
      'packages/types',
      'packages/validators',
      'packages/server-skeleton',
      'packages/client',
      'tools/codegen',
    ].filter((dir) => JSON.stringify(manifest(dir)).includes('"@pal-workflow/server"'));
    expect(dependents).toEqual([]);
  });
});
