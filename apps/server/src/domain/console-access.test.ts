import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployManifest, type TestContext } from '../../test/helpers.js';
import { ALICE, BOB, acmeAndOther } from '../../test/people-fixtures.js';
import { deleteConsoleAccess, grantConsoleAccess, hasConsoleAccess } from './console-access.js';
import { ConflictError, GoneError, InvalidArgumentError, NotFoundError } from './errors.js';
import { deleteUnusedConsoleTokens } from '../storage/tokens.js';
import { createSso, deleteSso } from './ssos.js';
import { issueConsoleToken, redeemToken } from './tokens.js';
import { engine } from '../../test/engine.js';

describe('console access', () => {
  let t: TestContext;
  let acme: string;
  let other: string;
  beforeEach(async () => {
    ({ t, acme, other } = await acmeAndOther());
  });
  afterEach(() => t.close());

  describe('C3, C4 console access', () => {
    let sso: string;
    beforeEach(async () => {
      await deployManifest(t.ctx, acme, { id: 'directory', modes: { console: true } });
      await deployManifest(t.ctx, acme, { id: 'expense', modes: { transaction: true } });
      await deployManifest(t.ctx, other, { id: 'theirs', modes: { console: true } });
      sso = await createSso(t.ctx, acme, ALICE);
    });

    // PostgreSQL runs them side by side. An entry locks its token (redeeming it), then the grant
    // it rests on; C4 must take them in that order too: the grant first deadlocked (40P01).
    it.runIf(engine === 'postgres')(
      'C4 beside a C6 entry that has redeemed its token: both finish, in either order of commits',
      async () => {
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        const token = await issueConsoleToken(t.ctx, acme, 'directory', sso, true);
        let c4: Promise<boolean> | undefined;
        const entered = await t.ctx.db.transaction().execute(async (trx) => {
          const tx = { ...t.ctx, db: trx };
          await redeemToken(tx, token);
          // C4 starts while the entry holds its token, and runs as far as it can.
          c4 = deleteConsoleAccess(t.ctx, acme, 'directory', sso, true);
          await new Promise((done) => setTimeout(done, 300));
          return hasConsoleAccess(tx, acme, 'directory', sso, true);
        });
        expect(entered).toBe(true);
        expect(await c4).toBe(true);
        expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(false);
      },
    );

    // C6 checks the grant in the transaction that stores its token, and locks it there; C4's grant
    // delete waits for that commit, then withdraws the token too. Checked before, the token of a
    // removed grant outlived C4, and a later C3 let it in.
    it.runIf(engine === 'postgres')(
      'C4 beside a C6 issuing its token: the token is withdrawn, and a grant given again does not let it in',
      async () => {
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        let c4: Promise<boolean> | undefined;
        const token = await t.ctx.db.transaction().execute(async (trx) => {
          const issued = await issueConsoleToken(
            { ...t.ctx, db: trx },
            acme,
            'directory',
            sso,
            true,
          );
          c4 = deleteConsoleAccess(t.ctx, acme, 'directory', sso, true);
          await new Promise((done) => setTimeout(done, 300));
          return issued;
        });
        expect(await c4).toBe(true);
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        await expect(redeemToken(t.ctx, token)).rejects.toThrow(GoneError);
      },
    );

    // The token a C4 finds locked is being redeemed: that entry waits for the grant C4 holds, so
    // waiting for the token would deadlock. It is passed over; the entry then finds no grant.
    it.runIf(engine === 'postgres')(
      'withdrawing tokens after the grant passes over one an entry holds, without waiting for it',
      async () => {
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        const held = await issueConsoleToken(t.ctx, acme, 'directory', sso, true);
        await issueConsoleToken(t.ctx, acme, 'directory', sso, true);
        const grant = { enterpriseId: acme, palId: 'directory', ssoId: sso, profile: 'enterprise' };
        const withdrawn = await t.ctx.db.transaction().execute(async (trx) => {
          await redeemToken({ ...t.ctx, db: trx }, held);
          return t.ctx.db
            .transaction()
            .execute((other) => deleteUnusedConsoleTokens(other, grant, { skipLocked: true }));
        });
        expect(withdrawn).toBe(1);
      },
    );

    it('grants under one profile at a time, answers true while the grant exists, and removes it', async () => {
      expect(await grantConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(true);
      expect(await grantConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(true);
      expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(true);
      expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, false)).toBe(false);
      expect(await deleteConsoleAccess(t.ctx, acme, 'directory', sso, false)).toBe(false);
      expect(await deleteConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(true);
      expect(await deleteConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(false);
      expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(false);
    });

    it('refuses a pal that is not console-mode (400), unknown or of another enterprise (404)', async () => {
      await expect(grantConsoleAccess(t.ctx, acme, 'expense', sso, true)).rejects.toThrow(
        InvalidArgumentError,
      );
      await expect(grantConsoleAccess(t.ctx, acme, 'missing', sso, true)).rejects.toThrow(
        NotFoundError,
      );
      await expect(grantConsoleAccess(t.ctx, acme, 'theirs', sso, true)).rejects.toThrow(
        NotFoundError,
      );
      await expect(deleteConsoleAccess(t.ctx, acme, 'theirs', sso, true)).rejects.toThrow(
        NotFoundError,
      );
    });

    it('refuses an SSO of another enterprise (404) or a deleted one (409), and changes nothing', async () => {
      const stranger = await createSso(t.ctx, other, BOB);
      await expect(grantConsoleAccess(t.ctx, acme, 'directory', stranger, true)).rejects.toThrow(
        NotFoundError,
      );
      await grantConsoleAccess(t.ctx, acme, 'directory', sso, false);
      await expect(deleteConsoleAccess(t.ctx, other, 'directory', sso, false)).rejects.toThrow(
        NotFoundError,
      );
      expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, false)).toBe(true);
      await deleteSso(t.ctx, acme, sso);
      await expect(grantConsoleAccess(t.ctx, acme, 'directory', sso, true)).rejects.toThrow(
        ConflictError,
      );
      // A deleted SSO's old grant no longer gives access.
      expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, false)).toBe(false);
    });
  });
});
