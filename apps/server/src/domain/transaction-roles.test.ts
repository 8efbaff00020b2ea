import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployManifest, type TestContext } from '../../test/helpers.js';
import { ALICE, BOB, acmeAndOther } from '../../test/people-fixtures.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { engine } from '../../test/engine.js';
import { ConflictError, GoneError, InvalidArgumentError, NotFoundError } from './errors.js';
import { createSso, deleteSso } from './ssos.js';
import { assignRole, listRoles, removeAllRoles, removeRole } from './transaction-roles.js';
import { issueTransactionToken, redeemToken } from './tokens.js';
import { createTransaction } from './transactions.js';

describe('transaction roles', () => {
  let t: TestContext;
  let acme: string;
  let other: string;
  beforeEach(async () => {
    ({ t, acme, other } = await acmeAndOther());
  });
  afterEach(() => t.close());

  describe('roles (T4, T7)', () => {
    let alice: string;
    let bob: string;
    let tx: string[];
    beforeEach(async () => {
      await deployManifest(t.ctx, acme, { id: 'expense', modes: { transaction: true } });
      alice = await createSso(t.ctx, acme, ALICE);
      bob = await createSso(t.ctx, acme, BOB);
      tx = [];
      for (let i = 0; i < 3; i++) tx.push((await createTransaction(t.ctx, acme, 'expense')).id);
      await assignRole(t.ctx, acme, tx[0], alice, 'participant');
      await assignRole(t.ctx, acme, tx[0], alice, 'owner');
      await assignRole(t.ctx, acme, tx[1], alice, 'participant');
      await assignRole(t.ctx, acme, tx[0], bob, 'participant');
    });

    it('assigns a role once', async () => {
      expect(await assignRole(t.ctx, acme, tx[2], alice, 'approver')).toBe(true);
      expect(await assignRole(t.ctx, acme, tx[2], alice, 'approver')).toBe(false);
      expect(await listRoles(t.ctx, acme, tx[0])).toEqual(
        [
          { ssoId: alice, role: 'owner' },
          { ssoId: alice, role: 'participant' },
          { ssoId: bob, role: 'participant' },
        ].sort((a, b) => (a.ssoId + a.role < b.ssoId + b.role ? -1 : 1)),
      );
      await expect(assignRole(t.ctx, acme, tx[2], alice, 'no spaces')).rejects.toThrow(
        InvalidArgumentError,
      );
    });

    it('T7 removes every role of the SSO on one transaction and counts them', async () => {
      expect(await removeRole(t.ctx, acme, tx[0], alice)).toBe(2);
      expect(await removeRole(t.ctx, acme, tx[0], alice)).toBe(0);
      expect(await listRoles(t.ctx, acme, tx[0])).toEqual([{ ssoId: bob, role: 'participant' }]);
      expect(await listRoles(t.ctx, acme, tx[1])).toEqual([{ ssoId: alice, role: 'participant' }]);
    });

    it('T4 removes every role of the SSO across the enterprise and counts them', async () => {
      expect(await removeAllRoles(t.ctx, acme, alice)).toBe(3);
      expect(await removeAllRoles(t.ctx, acme, alice)).toBe(0);
      expect(await listRoles(t.ctx, acme, tx[0])).toEqual([{ ssoId: bob, role: 'participant' }]);
    });

    // An entry gives the role its token names (workflows/entries.ts): a token issued before T7 or
    // T4 would give back what they removed.
    const token = (transactionId: string, sso: string, kind: 'participant' | 'anonymous') =>
      issueTransactionToken(t.ctx, acme, transactionId, sso, kind);
    const spent = (value: string) => expect(redeemToken(t.ctx, value)).rejects.toThrow(GoneError);

    it("T7 withdraws the SSO's unused T5 and T8 tokens on that transaction, and no others", async () => {
      const mine = [
        await token(tx[0], alice, 'participant'),
        await token(tx[0], alice, 'anonymous'),
      ];
      const elsewhere = await token(tx[1], alice, 'participant');
      const bobs = await token(tx[0], bob, 'participant');
      expect(await removeRole(t.ctx, acme, tx[0], alice)).toBe(2);
      for (const value of mine) await spent(value);
      for (const value of [elsewhere, bobs]) await redeemToken(t.ctx, value);
    });

    it("T4 withdraws the SSO's unused T5 and T8 tokens on every transaction of the enterprise", async () => {
      const mine = [
        await token(tx[0], alice, 'anonymous'),
        await token(tx[2], alice, 'participant'),
      ];
      const bobs = await token(tx[0], bob, 'anonymous');
      expect(await removeAllRoles(t.ctx, acme, alice)).toBe(3);
      for (const value of mine) await spent(value);
      await redeemToken(t.ctx, bobs);
    });

    // PostgreSQL runs them side by side. T7 takes the SSO's tokens before its roles, as an entry
    // does (its token, then the role): it waits for the entry that holds a token, and then removes
    // the role that entry gave. Roles first, the entry's role came after T7 and stayed.
    it.runIf(engine === 'postgres')(
      'T7 beside an entry that has redeemed its token: the role it gives is removed too',
      async () => {
        const value = await token(tx[2], alice, 'participant');
        let t7: Promise<number> | undefined;
        await t.ctx.db.transaction().execute(async (trx) => {
          const entry = { ...t.ctx, db: trx };
          await redeemToken(entry, value);
          t7 = removeRole(t.ctx, acme, tx[2], alice);
          let settled = false;
          void t7.finally(() => (settled = true));
          await sleep(300);
          await assignRole(entry, acme, tx[2], alice, 'participant');
          // T7 waits for the entry's token: it has not passed its token statement yet.
          expect(settled).toBe(false);
        });
        expect(await t7).toBe(1);
        expect(await listRoles(t.ctx, acme, tx[2])).toEqual([]);
      },
    );

    // A workflow's pal.roles.remove runs while its run holds the transaction's row (FOR UPDATE,
    // domain/transaction-events.ts), which an entry giving its role waits for (the role's
    // foreign key). Waiting in turn for the entry's token deadlocked (40P01); it removes roles only.
    it.runIf(engine === 'postgres')(
      "a workflow's role removal beside an entry that holds its token: no deadlock, the entry's role stays",
      async () => {
        const value = await token(tx[2], alice, 'participant');
        let run: Promise<number> | undefined;
        await t.ctx.db.transaction().execute(async (trx) => {
          const entry = { ...t.ctx, db: trx };
          await redeemToken(entry, value);
          run = t.ctx.db.transaction().execute(async (runTrx) => {
            await sql`select id from transactions where id = ${tx[2]} for update`.execute(runTrx);
            const removed = await removeRole({ ...t.ctx, db: runTrx }, acme, tx[2], alice, {
              withdrawTokens: false,
            });
            await sleep(300);
            return removed;
          });
          await sleep(100);
          await assignRole(entry, acme, tx[2], alice, 'participant');
        });
        expect(await run).toBe(0);
        expect(await listRoles(t.ctx, acme, tx[2])).toEqual([
          { ssoId: alice, role: 'participant' },
        ]);
      },
    );

    it('another enterprise gets 404 for the transaction or the SSO, and no role is removed', async () => {
      const stranger = await createSso(t.ctx, other, { ...BOB, email: 'carol@example.com' });
      await expect(removeRole(t.ctx, other, tx[0], alice)).rejects.toThrow(NotFoundError);
      await expect(removeAllRoles(t.ctx, other, alice)).rejects.toThrow(NotFoundError);
      await expect(removeRole(t.ctx, acme, tx[0], stranger)).rejects.toThrow(NotFoundError);
      await expect(assignRole(t.ctx, other, tx[0], stranger, 'participant')).rejects.toThrow(
        NotFoundError,
      );
      await expect(assignRole(t.ctx, acme, tx[0], stranger, 'participant')).rejects.toThrow(
        NotFoundError,
      );
      expect(await listRoles(t.ctx, acme, tx[0])).toHaveLength(3);
      expect(await listRoles(t.ctx, acme, tx[1])).toHaveLength(1);
    });

    it('a deleted SSO gets no new role', async () => {
      await deleteSso(t.ctx, acme, bob);
      await expect(assignRole(t.ctx, acme, tx[1], bob, 'participant')).rejects.toThrow(
        ConflictError,
      );
      expect(await removeRole(t.ctx, acme, tx[0], bob)).toBe(1);
    });
  });
});
