// The server's modules import one way (handlers/http → domain → storage), so the graph has no
// cycles; type-only imports count too, since a cycle of types still ties modules together.
import { fileURLToPath } from 'node:url';
import { parseCircular, parseDependencyTree } from 'dpdm';
import { expect, it } from 'vitest';

const serverDir = fileURLToPath(new URL('..', import.meta.url));

it('has no import cycles from any entry point', async () => {
  const tree = await parseDependencyTree(['src/main.ts', 'src/cli.ts', 'src/bench.ts'], {
    cwd: serverDir,
    context: serverDir,
    transform: false,
    skipDynamicImports: false,
  });
  // The walk reached the layers it is meant to check.
  const files = Object.keys(tree);
  expect(files.some((f) => f.includes('src/domain/'))).toBe(true);
  expect(files.some((f) => f.includes('src/storage/'))).toBe(true);
  expect(parseCircular(tree)).toEqual([]);
});
