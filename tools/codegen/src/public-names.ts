/**
 * The published packages' entry points name what they export (no `export *`), so that a change of
 * the public surface shows in review. A new schema type, operation or API is therefore not public
 * until its package's `src/index.ts` names it, and until then the generated code that uses it
 * across packages does not compile. The generator says which names wait for that.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Generated modules whose every export is public, by package (paths below its `src/`). */
export const ALL_PUBLIC = {
  types: ['generated/types.gen.ts'],
  validators: ['generated/schemas.gen.ts'],
  'server-skeleton': ['generated/handlers.gen.ts'],
  // One per API (OpenAPI tag): a new tag is a new file, listed too.
  client: ['generated/apis/*Api.gen.ts'],
} as const;

/** A package's modules a pattern of ALL_PUBLIC names (`*` within the file name). */
export function publicModules(root: string, name: string, pattern: string): string[] {
  if (!pattern.includes('*')) return [pattern];
  const folder = dirname(pattern);
  const file = new RegExp(`^${basename(pattern).replace(/[.]/g, '\\.').replace('*', '[^/]*')}$`);
  const where = join(root, 'packages', name, 'src', folder);
  return existsSync(where)
    ? readdirSync(where)
        .filter((entry) => file.test(entry))
        .sort()
        .map((entry) => `${folder}/${entry}`)
    : [];
}

const DECLARED =
  /^export (?:declare )?(?:interface|type|enum|const|class|function) ([A-Za-z_$][\w$]*)/gm;

/**
 * `packages/<name>/src/index.ts: <Name>` for each name a public generated module declares that
 * the entry point does not name. A package without an entry point (a fixture) is skipped.
 */
export function namesNotYetPublic(root: string): string[] {
  return Object.entries(ALL_PUBLIC).flatMap(([name, modules]) => {
    const entry = join('packages', name, 'src', 'index.ts');
    if (!existsSync(join(root, entry))) return [];
    const named = readFileSync(join(root, entry), 'utf8');
    return modules
      .flatMap((pattern) => publicModules(root, name, pattern))
      .flatMap((module) => {
        const file = join(root, 'packages', name, 'src', module);
        if (!existsSync(file)) return [];
        return [...readFileSync(file, 'utf8').matchAll(DECLARED)]
          .map((match) => match[1]!)
          .filter((declared) => !new RegExp(`\\b${declared}\\b`).test(named))
          .map((declared) => `${entry}: ${declared}`);
      });
  });
}
