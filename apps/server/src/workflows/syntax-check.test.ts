// The deploy-time compile of a pal's modules (workflows/syntax-check.ts), on the shared compiler.
import { describe, expect, it } from 'vitest';
import { checkWorkflowSyntax } from './syntax-check.js';

const problems = (files: Record<string, string>, folder?: string) =>
  checkWorkflowSyntax(files, folder).then(
    () => [],
    (error: unknown) => String((error as Error).message).split('\n'),
  );

describe('the deploy-time compile of workflow modules', () => {
  it('accepts modules that compile and import what the pal has, and runs none of them', async () => {
    expect(
      await problems({
        'workflows/a.js':
          "import { y } from './lib.js'; throw new Error('ran'); export const x = y;",
        'workflows/lib.js': 'export const y = 1;',
      }),
    ).toEqual([]);
  });

  it('names the file that does not compile once, however many modules import it', async () => {
    expect(
      await problems({
        'workflows/a.js': "import './lib.js'; export const a = 1;",
        'workflows/b.js': "import './lib.js'; export const b = 1;",
        'workflows/lib.js': 'export const y = 1;\nexport const z = {;',
      }),
    ).toEqual([expect.stringMatching(/^workflows\/lib\.js:2: SyntaxError: /)]);
    expect(await problems({ 'workflows/a.js': "import './gone.js';" })).toEqual([
      expect.stringMatching(/no module "workflows\/gone\.js"/),
    ]);
  });

  it('says when an import leads outside the pal folder, or leaves out its ".js"', async () => {
    expect(
      await problems({ 'workflows/a.js': "import '../../secret.js'; export const a = 1;" }),
    ).toEqual([
      expect.stringContaining('Error: import "../../secret.js" leads outside the pal folder'),
    ]);
    expect(
      await problems({
        'workflows/a.js': "import './lib'; export const a = 1;",
        'workflows/lib.js': 'export const y = 1;',
      }),
    ).toEqual([
      expect.stringContaining(
        'no module "workflows/lib" in this pal: an import names the file with its ".js" ("workflows/lib.js")',
      ),
    ]);
    // Up to the folder itself is still inside it.
    expect(
      await problems({
        'workflows/a.js': "import '../shared.js'; export const a = 1;",
        'shared.js': 'export const s = 1;',
      }),
    ).toEqual([]);
  });

  it("refuses a pal's import of the compile's own modules", async () => {
    for (const name of ['pal:compile', 'pal:end-of-compile'])
      expect(await problems({ 'workflows/a.js': `import '${name}'; export const a = 1;` })).toEqual(
        [expect.stringContaining(`no module "${name} (the host's)"`)],
      );
  });

  // quickjs-emscripten 0.32's own compile-only evaluation of a module reads bytes 80 to 87 of
  // this source as the module's namespace, and the compiler's WASM trapped on it.
  it('compiles a module whose text would pass for a module record, and compiles on after it', async () => {
    const head = 'export const run = () => 1; //';
    for (const fill of ['A', '\0']) {
      const source = `${head}${'x'.repeat(80 - head.length)}\0\0\0\0\x03\0\0\0${fill.repeat(200)}\n`;
      expect(await problems({ 'workflows/tx.js': source })).toEqual([]);
    }
    expect(await problems({ 'workflows/tx.js': 'export const run = () => {;' })).toEqual([
      expect.stringMatching(/^workflows\/tx\.js:1: SyntaxError: /),
    ]);
  });

  it('names each file as a compiler would: the pal folder as given, the file, the line', async () => {
    // Before: the folder was left out, unlike the manifest's errors (`bp3/pal.json: …`).
    expect(
      await problems(
        { 'workflows/transaction.js': 'export function run() {\n  return {;\n}\n' },
        'bp3',
      ),
    ).toEqual([expect.stringMatching(/^bp3\/workflows\/transaction\.js:2: SyntaxError: /)]);
    // Before: an import of a file the pal does not have was at line 0, whatever its line.
    expect(
      await problems(
        {
          'workflows/a.js': "// the helpers\nimport { x } from './lib.js';\nexport const a = x;",
          'workflows/b.js': "export const b = 1;\n\n  import './gone.js';\n",
        },
        'pals/x',
      ),
    ).toEqual([
      'pals/x/workflows/a.js:2: Error: no module "workflows/lib.js" in this pal (only the files its manifest names)',
      'pals/x/workflows/b.js:3: Error: no module "workflows/gone.js" in this pal (only the files its manifest names)',
    ]);
    // The file that imports it is named, not the one whose compile reached it.
    expect(
      await problems({
        'workflows/a.js': "import './lib.js';\nexport const a = 1;",
        'workflows/lib.js': "export const y = 1;\nimport './gone.js';",
      }),
    ).toEqual([
      'workflows/lib.js:2: Error: no module "workflows/gone.js" in this pal (only the files its manifest names)',
    ]);
    // Two modules that import one missing file are two problems, each at its own import; a
    // module that imports a failing helper is not one more.
    const gone =
      'Error: no module "workflows/gone.js" in this pal (only the files its manifest names)';
    expect(
      await problems({
        'workflows/a.js': "\nimport './gone.js';",
        'workflows/b.js': "import './gone.js';",
        'workflows/c.js': "import './lib.js';",
        'workflows/lib.js': "\n\nimport './gone.js';",
      }),
    ).toEqual([
      `workflows/a.js:2: ${gone}`,
      `workflows/b.js:1: ${gone}`,
      `workflows/lib.js:3: ${gone}`,
    ]);
  });
});
