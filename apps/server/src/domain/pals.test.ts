import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployManifest,
  manualClock,
  testContext,
  type TestContext,
  palSearch,
} from '../../test/helpers.js';
import type { WorkflowContext } from '../workflows/context.js';
import { createEnterprise } from './enterprises.js';
import { inTransaction } from './transact.js';
import { NotFoundError } from './errors.js';
import {
  getPal,
  getPalDetails,
  getPalVersion,
  listPals,
  searchPals,
  undeployPal,
  type PalSearch,
} from './pals.js';

const PALS = [
  {
    id: 'expense',
    name: 'Expense Approval',
    description: 'Approve travel expenses',
    category: 'Finance',
    publisher: 'Acme Finance',
    modes: { transaction: true },
  },
  {
    id: 'directory',
    name: 'Team Directory',
    description: 'Find colleagues',
    category: 'HR',
    publisher: 'Acme People',
    modes: { console: true },
  },
  {
    id: 'onboarding',
    name: 'Customer Onboarding',
    description: 'Collect KYC documents for FINANCE',
    category: 'Sales',
    publisher: 'Acme',
    branchName: 'main',
    modes: { transaction: true, web: true },
    shadow: true,
  },
  {
    id: 'test-pal',
    name: 'Expense Test',
    category: 'Finance',
    modes: { console: true },
    test: true,
  },
  {
    id: 'installed-pal',
    name: 'Installed Expense Tool',
    category: 'finance',
    modes: { console: true },
    installed: true,
  },
  { id: 'nameless', category: 'Misc 50%_off' },
];

async function seed(ctx: WorkflowContext, enterpriseId: string) {
  for (const pal of PALS) await deployManifest(ctx, enterpriseId, pal);
}

describe('searchPals', () => {
  let t: TestContext;
  let acme: string;
  let other: string;
  beforeAll(async () => {
    t = await testContext();
    acme = (await createEnterprise(t.ctx, 'Acme')).id;
    other = (await createEnterprise(t.ctx, 'Other')).id;
    await seed(t.ctx, acme);
    // The other enterprise has a pal with a clashing id and name: never visible to Acme.
    await deployManifest(t.ctx, other, {
      id: 'expense',
      name: 'Expense Approval (Other)',
      modes: { console: true },
    });
  });
  afterAll(() => t.close());

  const ids = async (search: Partial<PalSearch>, consoleOnly = false) =>
    (await searchPals(t.ctx, acme, palSearch(search), { consoleOnly })).items.map((p) => p.id);

  it('lists the enterprise pals by id, without test and installed ones', async () => {
    const page = await searchPals(t.ctx, acme, palSearch());
    expect(page.items.map((p) => p.id)).toEqual(['directory', 'expense', 'nameless', 'onboarding']);
    expect(page.total).toBe(4);
  });

  it('shows test pals with includeTest and installed pals with includeInstalled', async () => {
    expect(await ids({ includeTest: true })).toEqual([
      'directory',
      'expense',
      'nameless',
      'onboarding',
      'test-pal',
    ]);
    expect(await ids({ includeInstalled: true })).toEqual([
      'directory',
      'expense',
      'installed-pal',
      'nameless',
      'onboarding',
    ]);
    expect(await ids({ includeTest: true, includeInstalled: true })).toHaveLength(6);
  });

  it('matches name as case-insensitive contains, or with exactName as case-sensitive equality', async () => {
    expect(await ids({ name: 'EXPENSE' })).toEqual(['expense']);
    expect(await ids({ name: 'expense', includeTest: true, includeInstalled: true })).toEqual([
      'expense',
      'installed-pal',
      'test-pal',
    ]);
    expect(await ids({ name: 'Expense Approval', exactName: true })).toEqual(['expense']);
    expect(await ids({ name: 'expense approval', exactName: true })).toEqual([]);
    expect(await ids({ name: 'Expense', exactName: true })).toEqual([]);
  });

  it('matches description, category and publisher the same way', async () => {
    expect(await ids({ description: 'finance' })).toEqual(['onboarding']);
    expect(await ids({ description: 'Find colleagues', exactDescription: true })).toEqual([
      'directory',
    ]);
    expect(await ids({ description: 'find colleagues', exactDescription: true })).toEqual([]);
    expect(await ids({ category: 'FIN', includeInstalled: true })).toEqual([
      'expense',
      'installed-pal',
    ]);
    expect(await ids({ category: 'Finance', exactCategory: true, includeInstalled: true })).toEqual(
      ['expense'],
    );
    expect(await ids({ publisher: 'acme' })).toEqual(['directory', 'expense', 'onboarding']);
    expect(await ids({ publisher: 'Acme', exactPublisher: true })).toEqual(['onboarding']);
  });

  it('treats LIKE wildcards in a filter literally', async () => {
    expect(await ids({ category: '%' })).toEqual(['nameless']);
    expect(await ids({ category: '50%_' })).toEqual(['nameless']);
    expect(await ids({ name: '_' })).toEqual([]);
  });

  it('ANDs the string filters, or ORs them with matchAny', async () => {
    expect(await ids({ name: 'e', category: 'sales' })).toEqual(['onboarding']);
    expect(await ids({ name: 'directory', category: 'sales' })).toEqual([]);
    expect(await ids({ name: 'directory', category: 'sales', matchAny: true })).toEqual([
      'directory',
      'onboarding',
    ]);
    expect(
      await ids({ name: 'Team Directory', exactName: true, publisher: 'finance', matchAny: true }),
    ).toEqual(['directory', 'expense']);
    // matchAny does not widen the flags: test and installed pals stay hidden.
    expect(await ids({ name: 'expense', category: 'finance', matchAny: true })).toEqual([
      'expense',
    ]);
  });

  it('ignores empty filters', async () => {
    expect(await ids({ name: '', category: '' })).toEqual([
      'directory',
      'expense',
      'nameless',
      'onboarding',
    ]);
  });

  it('lists console-mode pals only for C1', async () => {
    expect(await ids({}, true)).toEqual(['directory']);
    expect(await ids({ includeTest: true, includeInstalled: true }, true)).toEqual([
      'directory',
      'installed-pal',
      'test-pal',
    ]);
    expect(await ids({ name: 'team' }, true)).toEqual(['directory']);
    expect(await ids({ name: 'onboarding' }, true)).toEqual([]);
  });

  it('returns the spec PalInfo shape, leaving absent strings out', async () => {
    const page = await searchPals(t.ctx, acme, palSearch({ includeTest: true }));
    const onboarding = page.items.find((p) => p.id === 'onboarding')!;
    expect(onboarding).toEqual({
      id: 'onboarding',
      name: 'Customer Onboarding',
      description: 'Collect KYC documents for FINANCE',
      category: 'Sales',
      branchName: 'main',
      createDate: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      lastModifiedDate: expect.any(String),
      deployed: true,
      modeTransaction: true,
      modeConsole: false,
      modeWeb: true,
      shadow: true,
      shell: false,
    });
    const nameless = page.items.find((p) => p.id === 'nameless')!;
    expect('name' in nameless).toBe(false);
    expect('description' in nameless).toBe(false);
    expect(JSON.stringify(nameless)).not.toContain('null');
  });

  it('keeps enterprises apart', async () => {
    const theirs = await searchPals(
      t.ctx,
      other,
      palSearch({ includeTest: true, includeInstalled: true }),
    );
    expect(theirs.items.map((p) => [p.id, p.name])).toEqual([
      ['expense', 'Expense Approval (Other)'],
    ]);
    expect((await getPal(t.ctx, acme, 'expense')).name).toBe('Expense Approval');
    expect((await getPal(t.ctx, other, 'expense')).name).toBe('Expense Approval (Other)');
    await expect(getPal(t.ctx, other, 'directory')).rejects.toThrow(NotFoundError);
    await expect(getPal(t.ctx, acme, 'nope')).rejects.toThrow('pal "nope" not found');
  });
});

describe('searchPals paging', () => {
  let t: TestContext;
  let acme: string;
  beforeAll(async () => {
    t = await testContext({ PAGE_SIZE: '2' });
    acme = (await createEnterprise(t.ctx, 'Acme')).id;
    await seed(t.ctx, acme);
  });
  afterAll(() => t.close());

  it('pages by PAGE_SIZE from a 0-based startRecord, with the total of all matches', async () => {
    const page = (startRecord: number, search: Partial<PalSearch> = {}) =>
      searchPals(t.ctx, acme, palSearch({ ...search, startRecord }));
    expect(await page(0)).toMatchObject({
      total: 4,
      items: [{ id: 'directory' }, { id: 'expense' }],
    });
    expect(await page(1)).toMatchObject({
      total: 4,
      items: [{ id: 'expense' }, { id: 'nameless' }],
    });
    expect(await page(3)).toMatchObject({ total: 4, items: [{ id: 'onboarding' }] });
    expect(await page(4)).toEqual({ total: 4, items: [] });
    expect(await page(1000)).toEqual({ total: 4, items: [] });
    expect(await page(0, { publisher: 'acme' })).toMatchObject({
      total: 3,
      items: [{ id: 'directory' }, { id: 'expense' }],
    });
  });
});

describe('deploying', () => {
  let t: TestContext;
  const clock = manualClock();
  let acme: string;
  beforeAll(async () => {
    t = await testContext({}, { now: clock.now });
    acme = (await createEnterprise(t.ctx, 'Acme')).id;
  });
  afterAll(() => t.close());

  it('deploys version 1, and a redeployment of the id replaces it as the next version', async () => {
    const first = await deployManifest(
      t.ctx,
      acme,
      { id: 'flow', name: 'Flow', modes: { console: true } },
      {},
    );
    expect(first).toEqual({ id: 'flow', name: 'Flow', version: 1, changed: true });
    const created = (await getPal(t.ctx, acme, 'flow')).createDate;

    clock.advance(60_000);
    const second = await deployManifest(
      t.ctx,
      acme,
      {
        id: 'flow',
        name: 'Flow 2',
        modes: { transaction: true },
        workflows: { transaction: 'main.js' },
      },
      { 'main.js': 'export function run() {}' },
    );
    expect(second).toMatchObject({ version: 2, changed: true });
    const pal = await getPalDetails(t.ctx, acme, 'flow');
    expect(pal).toMatchObject({
      name: 'Flow 2',
      version: 2,
      modeConsole: false,
      modeTransaction: true,
    });
    expect(pal.createDate).toBe(created);
    expect(pal.lastModifiedDate).not.toBe(created);
    expect(pal.manifest.workflows).toEqual({ transaction: 'main.js' });
    expect((await getPalVersion(t.ctx, acme, 'flow', 2)).files).toEqual({
      'main.js': 'export function run() {}',
    });
    expect((await getPalVersion(t.ctx, acme, 'flow', 1)).files).toEqual({});
    expect((await listPals(t.ctx, acme)).map((p) => p.id)).toEqual(['flow']);
  });

  it('keeps the version when asked to skip an unchanged package', async () => {
    const { deployPalPackage } = await import('./pals.js');
    const { buildPalPackage } = await import('./pal-manifest.js');
    const pkg = await buildPalPackage({ id: 'same', name: 'Same' }, {});
    expect((await deployPalPackage(t.ctx, acme, pkg, { skipIfUnchanged: true })).version).toBe(1);
    expect(await deployPalPackage(t.ctx, acme, pkg, { skipIfUnchanged: true })).toMatchObject({
      version: 1,
      changed: false,
    });
    expect((await deployPalPackage(t.ctx, acme, pkg)).version).toBe(2);
  });

  it('undeploys: the pal stays visible with deployed=false', async () => {
    await deployManifest(t.ctx, acme, { id: 'old' });
    expect((await undeployPal(t.ctx, acme, 'old')).deployed).toBe(false);
    expect((await getPal(t.ctx, acme, 'old')).deployed).toBe(false);
  });

  it('keeps nothing in the read cache of what a database transaction read: it may roll back', async () => {
    await deployManifest(t.ctx, acme, { id: 'kept' });
    expect((await getPal(t.ctx, acme, 'kept')).deployed).toBe(true);
    await expect(
      inTransaction(t.ctx, async (dbTx) => {
        // Read inside the transaction, after its own (uncommitted) change.
        expect((await undeployPal(dbTx, acme, 'kept')).deployed).toBe(false);
        // Another request meanwhile sees what is committed, not the transaction's read.
        expect((await getPal(t.ctx, acme, 'kept')).deployed).toBe(true);
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    expect((await getPal(t.ctx, acme, 'kept')).deployed).toBe(true);
    expect(
      (await searchPals(t.ctx, acme, palSearch({}))).items.find((p) => p.id === 'kept')?.deployed,
    ).toBe(true);
  });

  it('refuses an unknown enterprise', async () => {
    await expect(deployManifest(t.ctx, 'missing', { id: 'x' })).rejects.toThrow(NotFoundError);
  });
});
