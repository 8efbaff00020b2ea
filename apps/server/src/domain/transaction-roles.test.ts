import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployManifest, type TestContext } from '../../test/helpers.js';
import { ALICE, BOB, acmeAndOther } from '../../test/people-fixtures.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { createSso, deleteSso } from './ssos.js';
import { assignRole, listRoles, removeAllRoles, removeRole } from './transaction-roles.js';
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
