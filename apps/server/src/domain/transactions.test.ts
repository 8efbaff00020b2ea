import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployManifest,
  manualClock,
  testContext,
  type TestContext,
  transactionSearch,
} from '../../test/helpers.js';
import { createEnterprise } from './enterprises.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { undeployPal } from './pals.js';
import { createSso } from './ssos.js';
import { assignRole } from './transaction-roles.js';
import {
  createTransaction,
  expireDueTransactions,
  getTransaction,
  getTransactionDetails,
  moveWebServiceStatus,
  searchTransactions,
  setTransactionStatus,
  transitionTransaction,
  type TransactionSearch,
} from './transactions.js';

const DAY = 86_400_000;

const PALS = [
  {
    id: 'expense',
    name: 'Expense Approval',
    description: 'Approve travel expenses',
    category: 'Finance',
    modes: { transaction: true },
    lifetimes: { executeDays: 14, accessDays: 90, archiveDays: 365 },
  },
  {
    id: 'onboarding',
    name: 'Customer Onboarding',
    description: 'Collect KYC documents',
    category: 'Sales',
    modes: { transaction: true, web: true },
  },
  { id: 'qa', name: 'Expense QA', category: 'Finance', modes: { transaction: true }, test: true },
  { id: 'directory', name: 'Team Directory', modes: { console: true } },
  { id: 'nameless', category: '100% sure', modes: { transaction: true } },
];

describe('transactions', () => {
  let t: TestContext;
  const clock = manualClock(new Date('2025-03-01T09:00:00.000Z'));
  let acme: string;
  let other: string;
  let created: Record<string, string[]>;
  let theirs: string;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    t = await testContext({}, { now: clock.now });
    acme = (await createEnterprise(t.ctx, 'Acme')).id;
    other = (await createEnterprise(t.ctx, 'Other')).id;
    for (const pal of PALS) await deployManifest(t.ctx, acme, pal);
    await deployManifest(t.ctx, other, {
      id: 'expense',
      name: 'Expense Approval',
      modes: { transaction: true },
    });
    created = {};
    for (const [palId, count] of [
      ['expense', 3],
      ['onboarding', 2],
      ['qa', 1],
      ['nameless', 1],
    ] as const) {
      for (let i = 0; i < count; i++) {
        clock.advance(1000);
        (created[palId] ??= []).push((await createTransaction(t.ctx, acme, palId)).id);
      }
    }
    theirs = (await createTransaction(t.ctx, other, 'expense')).id;
    alice = await createSso(t.ctx, acme, {
      firstName: 'Alice',
      lastName: 'Ng',
      email: 'alice@acme.test',
    });
    bob = await createSso(t.ctx, acme, {
      firstName: 'Bob',
      lastName: 'Ray',
      email: 'bob@acme.test',
    });
  });
  afterAll(() => t.close());

  const ids = async (search: Partial<TransactionSearch>, enterpriseId = acme) =>
    (await searchTransactions(t.ctx, enterpriseId, transactionSearch(search))).items.map(
      (x) => x.id,
    );
  const all = () => [...created.expense, ...created.onboarding, ...created.nameless];

  describe('T1 create', () => {
    it('copies the pal, dates the end dates from its lifetimes, and starts the lifecycle', async () => {
      const tx = await getTransactionDetails(t.ctx, acme, created.expense[0]);
      const start = Date.parse(tx.createDate!);
      expect(tx).toMatchObject({
        name: 'Expense Approval',
        description: 'Approve travel expenses',
        category: 'Finance',
        status: 'NEW',
        systemStatus: 'OPEN',
        webServiceStatus: 'IDLE',
        palId: 'expense',
        palVersion: 1,
        test: false,
      });
      expect(tx.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Date.parse(tx.executeEndDate!) - start).toBe(14 * DAY);
      expect(Date.parse(tx.accessEndDate!) - start).toBe(90 * DAY);
      expect(Date.parse(tx.archiveEndDate!) - start).toBe(365 * DAY);
      expect(tx.modifiedDate).toBe(tx.createDate);
    });

    it('leaves end dates out without lifetimes, and takes the test flag from the pal', async () => {
      const plain = await getTransaction(t.ctx, acme, created.onboarding[0]);
      expect(Object.keys(plain).sort()).toEqual(
        [
          'category',
          'createDate',
          'description',
          'id',
          'modifiedDate',
          'name',
          'status',
          'test',
          'webServiceStatus',
        ].sort(),
      );
      expect((await getTransaction(t.ctx, acme, created.qa[0])).test).toBe(true);
      expect('name' in (await getTransaction(t.ctx, acme, created.nameless[0]))).toBe(false);
    });

    it('refuses a pal that is unknown, of another enterprise, not transaction-mode, or undeployed', async () => {
      await expect(createTransaction(t.ctx, acme, 'missing')).rejects.toThrow(NotFoundError);
      await expect(createTransaction(t.ctx, other, 'onboarding')).rejects.toThrow(NotFoundError);
      await expect(createTransaction(t.ctx, acme, 'directory')).rejects.toThrow(
        InvalidArgumentError,
      );
      await expect(createTransaction(t.ctx, acme, 'directory')).rejects.toThrow(
        'not a transaction-mode pal',
      );
      await expect(createTransaction(t.ctx, acme, '')).rejects.toThrow(InvalidArgumentError);
      await deployManifest(t.ctx, acme, { id: 'retired', modes: { transaction: true } });
      await undeployPal(t.ctx, acme, 'retired');
      await expect(createTransaction(t.ctx, acme, 'retired')).rejects.toThrow(ConflictError);
    });

    it('T10 is scoped by enterprise', async () => {
      await expect(getTransaction(t.ctx, acme, theirs)).rejects.toThrow(NotFoundError);
      await expect(getTransaction(t.ctx, other, created.expense[0])).rejects.toThrow(NotFoundError);
      expect((await getTransaction(t.ctx, other, theirs)).id).toBe(theirs);
    });
  });

  describe('T2 search', () => {
    it('lists the enterprise transactions in creation order, test ones only with includeTest', async () => {
      const page = await searchTransactions(t.ctx, acme, transactionSearch());
      expect(page.items.map((x) => x.id)).toEqual(all());
      expect(page.total).toBe(6);
      expect(await ids({ includeTest: true })).toEqual([
        ...all().slice(0, 5),
        created.qa[0],
        ...created.nameless,
      ]);
      expect(await ids({}, other)).toEqual([theirs]);
    });

    it('name: contains ignoring case (index for 3+ characters, a scan below), or exact', async () => {
      expect(await ids({ name: 'expense' })).toEqual(created.expense);
      expect(await ids({ name: 'EXP' })).toEqual(created.expense);
      expect(await ids({ name: 'eX' })).toEqual(created.expense);
      expect(await ids({ name: 'x' })).toEqual(created.expense);
      expect(await ids({ name: 'ense appr' })).toEqual(created.expense);
      expect(await ids({ name: 'expense', includeTest: true })).toEqual([
        ...created.expense,
        ...created.qa,
      ]);
      expect(await ids({ name: 'Expense Approval', exactName: true })).toEqual(created.expense);
      expect(await ids({ name: 'expense approval', exactName: true })).toEqual([]);
      expect(await ids({ name: 'Expense', exactName: true })).toEqual([]);
      expect(await ids({ name: '%' })).toEqual([]);
      expect(await ids({ name: 'zzz' })).toEqual([]);
    });

    it('description and category: contains or exact', async () => {
      expect(await ids({ description: 'kyc' })).toEqual(created.onboarding);
      expect(await ids({ description: 'Collect KYC documents', exactDescription: true })).toEqual(
        created.onboarding,
      );
      expect(await ids({ description: 'collect kyc documents', exactDescription: true })).toEqual(
        [],
      );
      expect(await ids({ category: 'FIN' })).toEqual(created.expense);
      expect(await ids({ category: 'Finance', exactCategory: true, includeTest: true })).toEqual([
        ...created.expense,
        ...created.qa,
      ]);
      expect(await ids({ category: 'finance', exactCategory: true })).toEqual([]);
      expect(await ids({ category: '0%' })).toEqual(created.nameless);
    });

    it('palId and status are exact', async () => {
      expect(await ids({ palId: 'onboarding' })).toEqual(created.onboarding);
      expect(await ids({ palId: 'Onboarding' })).toEqual([]);
      expect(await ids({ status: 'NEW' })).toEqual(all());
      await setTransactionStatus(t.ctx, acme, created.expense[1], 'Approved');
      expect(await ids({ status: 'Approved' })).toEqual([created.expense[1]]);
      expect(await ids({ status: 'approved' })).toEqual([]);
    });

    it('systemStatus and webServiceStatus are exact', async () => {
      const tx = created.onboarding[1];
      await transitionTransaction(t.ctx, acme, tx, 'cancel');
      await moveWebServiceStatus(t.ctx, acme, created.expense[2], 'start');
      try {
        expect(await ids({ systemStatus: 'CANCELLED' })).toEqual([tx]);
        expect(await ids({ systemStatus: 'OPEN' })).toEqual(all().filter((id) => id !== tx));
        expect(await ids({ systemStatus: 'cancelled' })).toEqual([]);
        expect(await ids({ webServiceStatus: 'RUNNING' })).toEqual([created.expense[2]]);
        expect(await ids({ webServiceStatus: 'IDLE' })).toHaveLength(5);
        expect(
          await ids({ systemStatus: 'OPEN', webServiceStatus: 'RUNNING', name: 'expense' }),
        ).toEqual([created.expense[2]]);
      } finally {
        await transitionTransaction(t.ctx, acme, tx, 'reopen');
        await moveWebServiceStatus(t.ctx, acme, created.expense[2], 'succeed');
      }
    });

    it('sso: the transactions on which that SSO holds a role', async () => {
      await assignRole(t.ctx, acme, created.expense[0], alice, 'participant');
      await assignRole(t.ctx, acme, created.expense[0], alice, 'owner');
      await assignRole(t.ctx, acme, created.onboarding[0], alice, 'participant');
      await assignRole(t.ctx, acme, created.qa[0], alice, 'participant');
      await assignRole(t.ctx, acme, created.onboarding[0], bob, 'participant');
      expect(await ids({ sso: alice })).toEqual([created.expense[0], created.onboarding[0]]);
      expect(await ids({ sso: alice, includeTest: true })).toEqual([
        created.expense[0],
        created.onboarding[0],
        created.qa[0],
      ]);
      expect(await ids({ sso: bob })).toEqual([created.onboarding[0]]);
      expect(await ids({ sso: alice, name: 'onboard' })).toEqual([created.onboarding[0]]);
      expect(await ids({ sso: 'nobody' })).toEqual([]);
      // Alice's roles are Acme's: another enterprise finds nothing with her id.
      expect(await ids({ sso: alice }, other)).toEqual([]);
    });

    it('combines filters with AND', async () => {
      expect(await ids({ name: 'expense', category: 'sales' })).toEqual([]);
      expect(
        await ids({ name: 'on', category: 'sales', palId: 'onboarding', status: 'NEW' }),
      ).toEqual(created.onboarding);
    });

    it('pages from a 0-based startRecord and counts all matches', async () => {
      expect(
        await searchTransactions(t.ctx, acme, transactionSearch({ startRecord: 4 })),
      ).toMatchObject({
        total: 6,
        items: [{ id: all()[4] }, { id: all()[5] }],
      });
      expect(await searchTransactions(t.ctx, acme, transactionSearch({ startRecord: 6 }))).toEqual({
        total: 6,
        items: [],
      });
      expect(
        await searchTransactions(
          t.ctx,
          acme,
          transactionSearch({ startRecord: 600, name: 'expense' }),
        ),
      ).toEqual({
        total: 3,
        items: [],
      });
    });
  });

  describe('lifecycle', () => {
    it('moves systemStatus by legal events and refuses illegal ones with 409', async () => {
      const [id] = created.nameless;
      expect((await transitionTransaction(t.ctx, acme, id, 'complete')).systemStatus).toBe(
        'COMPLETED',
      );
      await expect(transitionTransaction(t.ctx, acme, id, 'complete')).rejects.toThrow(
        ConflictError,
      );
      await expect(transitionTransaction(t.ctx, acme, id, 'cancel')).rejects.toThrow(ConflictError);
      expect((await transitionTransaction(t.ctx, acme, id, 'reopen')).systemStatus).toBe('OPEN');
      expect((await transitionTransaction(t.ctx, acme, id, 'cancel')).systemStatus).toBe(
        'CANCELLED',
      );
      const archived = await transitionTransaction(t.ctx, acme, id, 'archive');
      expect(archived.systemStatus).toBe('ARCHIVED');
      expect(archived.modifiedDate).toBe(clock.now().toISOString());
      for (const event of ['complete', 'cancel', 'expire', 'reopen', 'archive'] as const) {
        await expect(transitionTransaction(t.ctx, acme, id, event)).rejects.toThrow(ConflictError);
      }
      await expect(setTransactionStatus(t.ctx, acme, id, 'Done')).rejects.toThrow(ConflictError);
      await expect(moveWebServiceStatus(t.ctx, acme, id, 'start')).rejects.toThrow(ConflictError);
      await expect(transitionTransaction(t.ctx, acme, id, 'explode' as never)).rejects.toThrow(
        InvalidArgumentError,
      );
    });

    it('runs one web-service workflow at a time', async () => {
      const id = created.onboarding[0];
      expect((await moveWebServiceStatus(t.ctx, acme, id, 'start')).webServiceStatus).toBe(
        'RUNNING',
      );
      await expect(moveWebServiceStatus(t.ctx, acme, id, 'start')).rejects.toThrow(
        'already running',
      );
      expect((await moveWebServiceStatus(t.ctx, acme, id, 'fail')).webServiceStatus).toBe('FAILED');
      await expect(moveWebServiceStatus(t.ctx, acme, id, 'succeed')).rejects.toThrow(ConflictError);
      expect((await moveWebServiceStatus(t.ctx, acme, id, 'start')).webServiceStatus).toBe(
        'RUNNING',
      );
      expect((await moveWebServiceStatus(t.ctx, acme, id, 'succeed')).webServiceStatus).toBe(
        'SUCCEEDED',
      );
    });

    it('lets a new run take over a RUNNING that outlived any run (its server stopped mid-run)', async () => {
      const id = created.onboarding[1];
      await moveWebServiceStatus(t.ctx, acme, id, 'start');
      clock.advance(2 * t.ctx.config.workflowTimeoutMs + 29_000);
      await expect(moveWebServiceStatus(t.ctx, acme, id, 'start')).rejects.toThrow(
        'already running',
      );
      clock.advance(2_000);
      const restarted = await moveWebServiceStatus(t.ctx, acme, id, 'start');
      expect([restarted.webServiceStatus, restarted.modifiedDate]).toEqual([
        'RUNNING',
        clock.now().toISOString(),
      ]);
      await expect(moveWebServiceStatus(t.ctx, acme, id, 'start')).rejects.toThrow(
        'already running',
      );
    });

    it('validates the business status', async () => {
      await expect(setTransactionStatus(t.ctx, acme, created.expense[0], '')).rejects.toThrow(
        InvalidArgumentError,
      );
      await expect(
        setTransactionStatus(t.ctx, acme, created.expense[0], 'x'.repeat(65)),
      ).rejects.toThrow(InvalidArgumentError);
    });

    it('another enterprise cannot see or move a transaction, and nothing changes', async () => {
      const id = created.expense[0];
      const before = await getTransactionDetails(t.ctx, acme, id);
      await expect(transitionTransaction(t.ctx, other, id, 'cancel')).rejects.toThrow(
        NotFoundError,
      );
      await expect(setTransactionStatus(t.ctx, other, id, 'Hijacked')).rejects.toThrow(
        NotFoundError,
      );
      await expect(moveWebServiceStatus(t.ctx, other, id, 'start')).rejects.toThrow(NotFoundError);
      expect(await getTransactionDetails(t.ctx, acme, id)).toEqual(before);
    });

    it('the sweep expires open transactions after executeEndDate and archives them after accessEndDate', async () => {
      const [first, second] = created.expense;
      await transitionTransaction(t.ctx, acme, second, 'complete');
      clock.advance(14 * DAY);
      expect(await expireDueTransactions(t.ctx)).toEqual({ expired: 2, archived: 0 });
      expect((await getTransactionDetails(t.ctx, acme, first)).systemStatus).toBe('EXPIRED');
      expect((await getTransactionDetails(t.ctx, acme, second)).systemStatus).toBe('COMPLETED');
      // Transactions without lifetimes never move.
      expect((await getTransactionDetails(t.ctx, acme, created.onboarding[0])).systemStatus).toBe(
        'OPEN',
      );
      clock.advance(76 * DAY);
      expect(await expireDueTransactions(t.ctx)).toEqual({ expired: 0, archived: 3 });
      expect((await getTransactionDetails(t.ctx, acme, second)).systemStatus).toBe('ARCHIVED');
      expect(await expireDueTransactions(t.ctx)).toEqual({ expired: 0, archived: 0 });
    });
  });
});

describe('transactions paging', () => {
  it('holds PAGE_SIZE items a page', async () => {
    const t = await testContext({ PAGE_SIZE: '2' });
    try {
      const acme = (await createEnterprise(t.ctx, 'Acme')).id;
      await deployManifest(t.ctx, acme, {
        id: 'p',
        name: 'Purchase order',
        modes: { transaction: true },
      });
      const made: string[] = [];
      for (let i = 0; i < 5; i++) made.push((await createTransaction(t.ctx, acme, 'p')).id);
      expect(
        await searchTransactions(t.ctx, acme, transactionSearch({ name: 'purchase' })),
      ).toEqual({
        total: 5,
        items: [expect.objectContaining({ id: made[0] }), expect.objectContaining({ id: made[1] })],
      });
      expect(
        (await searchTransactions(t.ctx, acme, transactionSearch({ startRecord: 4 }))).items.map(
          (x) => x.id,
        ),
      ).toEqual([made[4]]);
    } finally {
      await t.close();
    }
  });
});
