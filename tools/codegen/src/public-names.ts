/**
 * The published packages' entry points name what they export (no `export *`), so that a change of
 * the public surface shows in review. A new schema type, operation or API is therefore not public
 * until its package's `src/index.ts` names it, and until then the generated code that uses it
 * across packages does not compile. The generator says which names wait for that.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Generated modules whose every export is public, by package (paths below its `src/`). */
export const ALL_PUBLIC = {
  types: ['generated/types.gen.ts'],
  validators: ['generated/schemas.gen.ts'],
  'server-skeleton': ['generated/handlers.gen.ts'],
  client: [
    'generated/apis/ConsoleApi.gen.ts',
    'generated/apis/EnterpriseApi.gen.ts',
    'generated/apis/PalsApi.gen.ts',
    'generated/apis/TransactionsApi.gen.ts',
    'generated/apis/UserApi.gen.ts',
  ],
} as const;

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
    return modules.flatMap((module) => {
      const file = join(root, 'packages', name, 'src', module);
      if (!existsSync(file)) return [];
      return [...readFileSync(file, 'utf8').matchAll(DECLARED)]
        .map((match) => match[1]!)
        .filter((declared) => !new RegExp(`\\b${declared}\\b`).test(named))
        .map((declared) => `${entry}: ${declared}`);
    });
  });
}
