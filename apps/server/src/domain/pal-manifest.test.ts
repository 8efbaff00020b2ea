import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { InvalidArgumentError } from './errors.js';
import {
  ManifestError,
  buildPalPackage,
  loadPalPackage,
  parsePalManifest,
} from './pal-manifest.js';

const FILE = 'examples/pals/x/pal.json';

function problems(json: unknown): string {
  try {
    parsePalManifest(json, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    expect(error).toBeInstanceOf(InvalidArgumentError); // so the HTTP layer answers 400
    return (error as Error).message;
  }
  throw new Error('expected the manifest to be refused');
}

describe('parsePalManifest', () => {
  it('accepts a manifest with only the decided keys, and fills the defaults', () => {
    const manifest = parsePalManifest({ id: 'expense-approval', name: 'Expense approval' }, FILE);
    expect(manifest).toEqual({
      id: 'expense-approval',
      name: 'Expense approval',
      modes: { transaction: false, console: false, web: false },
      shadow: false,
      shell: false,
      test: false,
      installed: false,
    });
  });

  it('accepts every key', () => {
    const manifest = parsePalManifest(
      {
        id: 'onboarding.v2',
        name: 'Customer onboarding',
        description: 'Collects documents',
        category: 'Sales',
        publisher: 'Acme',
        branchName: 'main',
        modes: { transaction: true, web: true },
        shadow: true,
        shell: false,
        test: true,
        installed: true,
        lifetimes: { executeDays: 14, accessDays: 90, archiveDays: 365 },
        workflows: { main: 'workflows/main.js' },
      },
      FILE,
    );
    expect(manifest.modes).toEqual({ transaction: true, console: false, web: true });
    expect(manifest.lifetimes).toEqual({ executeDays: 14, accessDays: 90, archiveDays: 365 });
  });

  it.each([
    [
      { id: 'a', modes: { console: 'yes' } },
      `${FILE}: modes.console: expected boolean, got string`,
    ],
    [{ name: 'no id' }, `${FILE}: id: is required (expected string)`],
    [{ id: 42 }, `${FILE}: id: expected string, got number`],
    [{ id: '../etc' }, `${FILE}: id: expected 1 to 128 letters`],
    [{ id: 'a', colour: 'red' }, `${FILE}: colour: unknown key`],
    [{ id: 'a', modes: { console: true, batch: true } }, `${FILE}: modes.batch: unknown key`],
    [{ id: 'a', name: '' }, `${FILE}: name: must not be empty`],
    [{ id: 'a', test: 'true' }, `${FILE}: test: expected boolean, got string`],
    [{ id: 'a', modes: [] }, `${FILE}: modes: expected object, got array`],
    [
      { id: 'a', lifetimes: { executeDays: 1.5 } },
      `${FILE}: lifetimes.executeDays: expected a whole number, got 1.5`,
    ],
    [
      { id: 'a', lifetimes: { executeDays: 0 } },
      `${FILE}: lifetimes.executeDays: must be at least 1`,
    ],
    [
      { id: 'a', lifetimes: { executeDays: 30, accessDays: 10 } },
      `${FILE}: lifetimes.accessDays: must not be less than executeDays`,
    ],
    [
      { id: 'a', lifetimes: { accessDays: 30, archiveDays: 10 } },
      `${FILE}: lifetimes.archiveDays: must not be less than accessDays`,
    ],
    [
      { id: 'a', workflows: { main: 'main.ts' } },
      `${FILE}: workflows.main: expected a path to a .js file`,
    ],
    [
      { id: 'a', workflows: { main: '../main.js' } },
      `${FILE}: workflows.main: must be a path inside the pal folder`,
    ],
    [
      { id: 'a', workflows: { main: '/abs/main.js' } },
      `${FILE}: workflows.main: must be a path inside the pal folder`,
    ],
    [[1, 2], `${FILE}: expected object, got array`],
  ])('refuses %j naming the file and the key', (json, message) => {
    expect(problems(json)).toContain(message);
  });

  it('reports every problem, one per line', () => {
    const message = problems({ id: 1, shadow: 'no', extra: true });
    expect(message.split('\n')).toHaveLength(3);
    expect(message).toContain(`${FILE}: shadow: expected boolean`);
  });
});

describe('loadPalPackage', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('pal-manifest-');
  });
  afterEach(() => dir.remove());

  const folder = (name: string, manifest: unknown, files: Record<string, string> = {}) => {
    const path = join(dir.path, name);
    mkdirSync(path, { recursive: true });
    writeFileSync(
      join(path, 'pal.json'),
      typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
    );
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(join(path, file, '..'), { recursive: true });
      writeFileSync(join(path, file), content);
    }
    return path;
  };

  it('reads the manifest and the workflow files it names', async () => {
    const path = folder(
      'ok',
      { id: 'ok', workflows: { main: 'flows/main.js' } },
      { 'flows/main.js': 'export function run() {}' },
    );
    const pkg = await loadPalPackage(path);
    expect(pkg.manifest.id).toBe('ok');
    expect(pkg.files).toEqual({ 'flows/main.js': 'export function run() {}' });
    expect(pkg.contentHash).toMatch(/^[0-9a-f]{64}$/);
    // Same content, same hash; other content, another.
    expect((await loadPalPackage(path)).contentHash).toBe(pkg.contentHash);
    writeFileSync(join(path, 'flows/main.js'), 'export function run() { return 1 }');
    expect((await loadPalPackage(path)).contentHash).not.toBe(pkg.contentHash);
  });

  it('names the file when pal.json is missing, is not JSON, or names a missing workflow file', async () => {
    const empty = join(dir.path, 'empty');
    mkdirSync(empty);
    await expect(loadPalPackage(empty)).rejects.toThrow(`${join(empty, 'pal.json')}: not found`);
    const given = folder('given', { id: 'g' });
    await expect(loadPalPackage(join(given, 'pal.json'))).rejects.toThrow(
      `${join(given, 'pal.json')}: is a file: name the pal folder, the one that holds pal.json`,
    );
    const broken = folder('broken', '{ "id": ');
    await expect(loadPalPackage(broken)).rejects.toThrow(
      `${join(broken, 'pal.json')}: not valid JSON`,
    );
    const missing = folder('missing', { id: 'm', workflows: { main: 'main.js' } });
    await expect(loadPalPackage(missing)).rejects.toThrow(
      `${join(missing, 'pal.json')}: workflows.main: file "main.js" not found in the pal folder`,
    );
    const bad = folder('bad', { id: 'b', modes: { console: 1 } });
    await expect(loadPalPackage(bad)).rejects.toThrow(
      `${join(bad, 'pal.json')}: modes.console: expected boolean`,
    );
  });

  it('refuses at deploy a name, description or label XML cannot carry; a stored manifest is still read', async () => {
    const manifest = {
      id: 'ctl',
      name: 'Expense\u0000 claim',
      description: 'ok\u001b[31m',
      category: 'fine',
      workflows: { transaction: 'transaction.js' },
    };
    const path = folder('ctl', manifest, { 'transaction.js': 'export function run() {}' });
    const file = join(path, 'pal.json');
    const error = await loadPalPackage(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect(String((error as Error).message).split('\n')).toEqual([
      `${file}: name: holds a character that XML cannot carry (a control character)`,
      `${file}: description: holds a character that XML cannot carry (a control character)`,
    ]);
    // With another problem too: all at once.
    writeFileSync(file, JSON.stringify({ ...manifest, modes: { console: 1 } }));
    expect(String(await loadPalPackage(path).catch((e: unknown) => e))).toContain(
      'name: holds a character',
    );
    // A pal deployed before this check is read as it was stored.
    expect(parsePalManifest(manifest, 'pal.json').name).toBe('Expense\u0000 claim');
  });

  it('reports the missing files of a manifest with other problems at once, on their own lines', async () => {
    // Before: the id's problem and the path's, and the missing main.js only once they were fixed.
    const many = folder('many', {
      id: '-bad id',
      workflows: { main: 'main.js', out: '../x.js', helpers: 'helpers.js' },
      documents: [{ file: 'documents/gone.pdf' }, { file: 'documents/x.txt' }],
    });
    writeFileSync(join(many, 'helpers.js'), 'export const h = 1;');
    const error = await loadPalPackage(many).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    const file = join(many, 'pal.json');
    expect(
      String((error as Error).message)
        .split('\n')
        .sort(),
    ).toEqual(
      [
        `${file}: id: expected 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit`,
        `${file}: workflows.out: must be a path inside the pal folder`,
        `${file}: workflows.main: file "main.js" not found in the pal folder`,
        `${file}: documents[0].file: file "documents/gone.pdf" not found in the pal folder`,
        `${file}: documents[1].file: expected a .pdf, .png, .jpg or .jpeg file`,
      ].sort(),
    );
  });

  it('follows links only inside the folder, reads only regular files, and only UTF-8 workflows', async () => {
    const outside = join(dir.path, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.js'), 'export function run() { return []; }');
    writeFileSync(join(outside, 'secret.pdf'), '%PDF-1.4\n%%EOF\n');
    const manifest = { id: 'l', modes: { console: true }, workflows: { console: 'c.js' } };
    const linked = folder('linked', manifest);
    symlinkSync(join(outside, 'secret.js'), join(linked, 'c.js'));
    await expect(loadPalPackage(linked)).rejects.toThrow(
      `${join(linked, 'pal.json')}: workflows.console: file "c.js" is a link to a file outside the pal folder`,
    );
    // Through a linked folder too.
    const throughFolder = folder('through', {
      ...manifest,
      workflows: { console: 'ext/secret.js' },
    });
    symlinkSync(outside, join(throughFolder, 'ext'));
    await expect(loadPalPackage(throughFolder)).rejects.toThrow(
      'file "ext/secret.js" is a link to a file outside the pal folder',
    );
    const document = folder('document', {
      id: 'd',
      documents: [{ file: 'documents/a.pdf', fields: [], signatures: [] }],
    });
    mkdirSync(join(document, 'documents'));
    symlinkSync(join(outside, 'secret.pdf'), join(document, 'documents', 'a.pdf'));
    await expect(loadPalPackage(document)).rejects.toThrow(
      `${join(document, 'pal.json')}: documents[0].file: file "documents/a.pdf" is a link to a file outside the pal folder`,
    );
    // A link that stays in the folder is read as its target.
    const inside = folder('inside', manifest, { 'lib/c.js': 'export function console() {}' });
    symlinkSync(join(inside, 'lib', 'c.js'), join(inside, 'c.js'));
    expect((await loadPalPackage(inside)).files['c.js']).toBe('export function console() {}');
    // A name that merely begins with two dots is a file of the folder.
    const dots = folder(
      'dots',
      { ...manifest, workflows: { console: '..c.js' } },
      { '..c.js': '' },
    );
    expect(Object.keys((await loadPalPackage(dots)).files)).toEqual(['..c.js']);
    // A FIFO would block the read for good: it is refused at once.
    const fifo = folder('fifo', manifest);
    execFileSync('mkfifo', [join(fifo, 'c.js')]);
    await expect(loadPalPackage(fifo)).rejects.toThrow('file "c.js" is not a regular file');
    const latin1 = folder('latin1', manifest);
    writeFileSync(join(latin1, 'c.js'), Buffer.from('export const s = "caf\xe9";', 'latin1'));
    await expect(loadPalPackage(latin1)).rejects.toThrow('file "c.js" is not UTF-8 text');
    const manifestLatin1 = folder('manifest-latin1', '');
    writeFileSync(join(manifestLatin1, 'pal.json'), Buffer.from('{"id":"caf\xe9"}', 'latin1'));
    await expect(loadPalPackage(manifestLatin1)).rejects.toThrow(
      `${join(manifestLatin1, 'pal.json')}: is not UTF-8 text`,
    );
  });

  it('takes workflow files of up to 1 MiB each and 8 MiB in all, and names the file or the total past that', async () => {
    const MiB = 1024 * 1024;
    const flows = (count: number, bytes: number) => {
      const workflows: Record<string, string> = {};
      const files: Record<string, string> = {};
      for (let i = 0; i < count; i++) {
        workflows[`m${i}`] = `flows/m${i}.js`;
        files[`flows/m${i}.js`] = `// ${i}\n`.padEnd(bytes, ' ');
      }
      return { workflows, files };
    };
    const eight = flows(8, MiB);
    const atCap = await loadPalPackage(
      folder('at-cap', { id: 'at-cap', workflows: eight.workflows }, eight.files),
    );
    expect(Object.keys(atCap.files)).toHaveLength(8);

    const nine = flows(9, MiB);
    const overTotal = folder('over-total', { id: 'over', workflows: nine.workflows }, nine.files);
    // (`.then`: a package that loads would otherwise be printed whole, 9 MiB of it.)
    await expect(loadPalPackage(overTotal).then(() => 'loaded')).rejects.toThrow(
      `${join(overTotal, 'pal.json')}: workflows: the workflow files are 9 MiB in all; at most 8 MiB`,
    );
    // The same from files handed over in memory (no folder to read them from).
    await expect(
      buildPalPackage({ id: 'over', workflows: nine.workflows }, nine.files).then(() => 'built'),
    ).rejects.toThrow('pal.json: workflows: the workflow files are 9 MiB in all; at most 8 MiB');

    const big = flows(1, MiB + 1);
    const overFile = folder('over-file', { id: 'big', workflows: big.workflows }, big.files);
    await expect(loadPalPackage(overFile)).rejects.toThrow(
      `${join(overFile, 'pal.json')}: workflows.m0: file "flows/m0.js" is larger than 1 MiB`,
    );
  });

  it('buildPalPackage checks that the workflow files are given', async () => {
    await expect(buildPalPackage({ id: 'w', workflows: { main: 'main.js' } }, {})).rejects.toThrow(
      'pal.json: workflows.main: file "main.js" not found',
    );
  });
});
