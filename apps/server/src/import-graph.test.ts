// The server's modules import one way, from the outside in (docs/architecture.md, "Inside the
// server"): each file has a rank, and a file may import only files of its own rank or lower. So
// the graph has no cycles between layers, and none inside one either (checked separately, since a
// cycle of types still ties modules together: type-only imports count).
import { fileURLToPath } from 'node:url';
import { parseCircular, parseDependencyTree } from 'dpdm';
import { expect, it } from 'vitest';

const serverDir = fileURLToPath(new URL('..', import.meta.url));

// The ranks, highest (outermost) first. A path matches the longest prefix listed; every file of
// src/ must match one. Beyond the chain (main → server → app → handlers → http →
// workflows → domain → storage/mail → config):
// - the command-line entry points (cli.ts and the commands it delegates to, bench.ts) stand
//   beside main.ts: each assembles what it runs;
// - outbox/ (the dispatcher that delivers after commit) ranks with workflows/: both run over the
//   domain and are started by the server; outbox/settings.ts is configuration (config.ts composes
//   it), so it ranks with config;
// - documents/ (reading PDF and image files) is a leaf library the domain calls, like mail/;
// - html.ts (escaping), text-cut.ts (cutting text to a bound), email-key.ts (the form addresses
//   are compared in, which a migration computes too), json-walk.ts (a walk over parsed JSON that
//   names paths), folders.ts (making the service's folders), calendar-days.ts and
//   setting-parsers.ts are leaves, with config;
// - server-processes.ts (the primary of several server processes) starts servers as server.ts
//   does, and ranks with it.
const RANKS: Record<string, number> = {
  'src/main.ts': 9,
  'src/cli.ts': 9,
  'src/cli-webhooks.ts': 9,
  'src/audit-command.ts': 9,
  'src/bench.ts': 9,
  'src/server.ts': 8,
  'src/server-processes.ts': 8,
  'src/app.ts': 7,
  'src/handlers/': 6,
  'src/http/': 5,
  'src/workflows/': 4,
  'src/outbox/': 4,
  'src/domain/': 3,
  'src/storage/': 2,
  'src/mail/': 2,
  'src/documents/': 2,
  'src/config.ts': 1,
  'src/setting-parsers.ts': 1,
  'src/outbox/settings.ts': 1,
  'src/html.ts': 1,
  'src/text-cut.ts': 1,
  'src/email-key.ts': 1,
  'src/json-walk.ts': 1,
  'src/folders.ts': 1,
  'src/calendar-days.ts': 1,
};

function rankOf(file: string): number {
  const prefix = Object.keys(RANKS)
    .filter((p) => file.startsWith(p))
    .sort((a, b) => b.length - a.length)[0];
  if (prefix === undefined) throw new Error(`${file} has no rank in import-graph.test.ts`);
  return RANKS[prefix]!;
}

// Upward imports known and accepted for now, each a debt to remove; any other upward import fails
// the test. Empty: keep it so.
const ALLOWED_UPWARD: string[] = [];

let tree: ReturnType<typeof parseDependencyTree> | undefined;

function graph() {
  return (tree ??= parseDependencyTree(['src/main.ts', 'src/cli.ts', 'src/bench.ts'], {
    cwd: serverDir,
    context: serverDir,
    transform: false,
    skipDynamicImports: false,
  }));
}

it('has no import cycles from any entry point', async () => {
  const tree = await graph();
  // The walk reached the layers it is meant to check.
  const files = Object.keys(tree);
  expect(files.some((f) => f.includes('src/domain/'))).toBe(true);
  expect(files.some((f) => f.includes('src/storage/'))).toBe(true);
  expect(parseCircular(tree)).toEqual([]);
});

it('has no import that runs up the layers', async () => {
  const tree = await graph();
  const upward: string[] = [];
  let edges = 0;
  for (const [from, deps] of Object.entries(tree)) {
    if (!from.startsWith('src/')) continue;
    for (const dep of deps ?? []) {
      if (dep.id === null || !dep.id.startsWith('src/')) continue;
      edges += 1;
      if (rankOf(dep.id) > rankOf(from)) upward.push(`${from} → ${dep.id}`);
    }
  }
  expect(edges).toBeGreaterThan(100);
  expect(upward.sort()).toEqual(ALLOWED_UPWARD);
});
