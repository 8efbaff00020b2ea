import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployManifest, type TestContext } from '../../test/helpers.js';
import { ALICE, BOB, acmeAndOther } from '../../test/people-fixtures.js';
import { deleteConsoleAccess, grantConsoleAccess, hasConsoleAccess } from './console-access.js';
import {
  ConflictError,
  ForbiddenError,
  GoneError,
  InvalidArgumentError,
  NotFoundError,
} from './errors.js';
import { createSso, deleteSso } from './ssos.js';
import { issueConsoleToken, redeemToken } from './tokens.js';
import { engine } from '../../test/engine.js';
import { sql } from 'kysely';
import { setTimeout as sleep } from 'node:timers/promises';
import { deferred } from '../storage/deferred.js';

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
    // delete waits for that commit, then withdraws the token too. Checked before that transaction,
    // a C4 that ran between the check and the commit missed the token, and a later C3 let it in.
    // Here a lock on audit_log holds both commits (each writes an audit record last), so C4 runs
    // while the token is stored but not committed.
    it.runIf(engine === 'postgres')(
      'C4 beside a C6 issuing its token: the token is withdrawn, and a grant given again does not let it in',
      async () => {
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        const audit = deferred();
        const holder = t.ctx.db.transaction().execute(async (trx) => {
          await sql`lock table audit_log in share mode`.execute(trx);
          await audit.promise;
        });
        await sleep(100);
        const c6 = issueConsoleToken(t.ctx, acme, 'directory', sso, true);
        await sleep(200);
        const c4 = deleteConsoleAccess(t.ctx, acme, 'directory', sso, true);
        await sleep(200);
        audit.resolve();
        await holder;
        const token = await c6;
        expect(await c4).toBe(true);
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        await expect(redeemToken(t.ctx, token)).rejects.toThrow(GoneError);
      },
    );

    // The token C4 withdraws after the grant may be held by its entry, which waits for the grant
    // C4 holds. Waiting would deadlock; passing over it left it unused once the entry was refused,
    // and a later C3 let it in. C4 lets go and starts again: the entry ends first.
    it.runIf(engine === 'postgres')(
      'C4 beside an entry holding a token issued while C4 waited: the token never enters after C3 again',
      async () => {
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        // I issues the token and holds the grant; Y, the next holder of the grant, queues behind.
        const issued = deferred();
        let token = '';
        const issuing = t.ctx.db.transaction().execute(async (trx) => {
          token = await issueConsoleToken({ ...t.ctx, db: trx }, acme, 'directory', sso, true);
          await issued.promise;
        });
        await sleep(100);
        const next = deferred();
        const holding = t.ctx.db.transaction().execute(async (trx) => {
          await hasConsoleAccess({ ...t.ctx, db: trx }, acme, 'directory', sso, true);
          await next.promise;
        });
        await sleep(100);
        // C4's first pass cannot see the token; its grant delete waits for I, then for Y.
        const c4 = deleteConsoleAccess(t.ctx, acme, 'directory', sso, true);
        await sleep(200);
        issued.resolve();
        await issuing;
        await sleep(100);
        // The entry redeems the token, then waits for the grant behind C4. As a real entry
        // (workflows/entries.ts), one that finds no grant is refused and keeps nothing, its
        // redemption included.
        const entry = t.ctx.db.transaction().execute(async (trx) => {
          const tx = { ...t.ctx, db: trx };
          await redeemToken(tx, token);
          if (!(await hasConsoleAccess(tx, acme, 'directory', sso, true)))
            throw new ForbiddenError('no grant');
        });
        await sleep(150);
        next.resolve();
        await holding;
        expect(await c4).toBe(true);
        // Entered or refused: either is right, as long as the token is spent or gone after it.
        await entry.catch((error: unknown) => expect(error).toBeInstanceOf(ForbiddenError));
        expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(false);
        await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
        await expect(redeemToken(t.ctx, token)).rejects.toThrow(GoneError);
      },
    );

    // Every order at once: tokens issued and entries made while C4 runs. Whatever interleaves, no
    // call fails but with the answers the operations have (403, 410), and once C3 gives the grant
    // again no token of the round enters.
    it.runIf(engine === 'postgres')(
      'C6 issues and entries racing C4, 12 rounds: no other error, and no token outlives the grant',
      async () => {
        const enter = (token: string) =>
          t.ctx.db.transaction().execute(async (trx) => {
            const tx = { ...t.ctx, db: trx };
            await redeemToken(tx, token);
            if (!(await hasConsoleAccess(tx, acme, 'directory', sso, true)))
              throw new ForbiddenError('no grant');
          });
        const expected = (error: unknown) => {
          if (!(error instanceof ForbiddenError || error instanceof GoneError)) throw error;
        };
        for (let round = 0; round < 12; round++) {
          await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
          const tokens: string[] = [];
          const issue = async (delay: number) => {
            await sleep(delay);
            const token = await issueConsoleToken(t.ctx, acme, 'directory', sso, true);
            tokens.push(token);
            await sleep(Math.random() * 5);
            await enter(token).catch(expected);
          };
          // Each settles to its error, if any, so none is left unhandled while C4 runs.
          const issuing = Array.from({ length: 6 }, (_, i) =>
            issue(i * 2 + Math.random() * 3).then(
              () => undefined,
              (error: unknown) => error,
            ),
          );
          await sleep(Math.random() * 12);
          expect(await deleteConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(true);
          for (const error of await Promise.all(issuing)) if (error) expected(error);
          await grantConsoleAccess(t.ctx, acme, 'directory', sso, true);
          for (const token of tokens)
            await expect(enter(token), `round ${round}`).rejects.toThrow(GoneError);
          await deleteConsoleAccess(t.ctx, acme, 'directory', sso, true);
        }
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

    it.runIf(engine === 'sqlite')(
      'C3 commits its grant with its record: an audit write that fails leaves no grant, and the retry records it',
      async () => {
        const grant = [acme, 'directory', sso, true] as const;
        await sql`create trigger no_given before insert on audit_log when new.action = 'grant.given' begin select raise(abort, 'audit write failed'); end`.execute(
          t.ctx.db,
        );
        await expect(grantConsoleAccess(t.ctx, ...grant)).rejects.toThrow('audit write failed');
        expect(await hasConsoleAccess(t.ctx, acme, 'directory', sso, true)).toBe(false);
        await sql`drop trigger no_given`.execute(t.ctx.db);
        expect(await grantConsoleAccess(t.ctx, ...grant)).toBe(true);
        const given = await t.ctx.db
          .selectFrom('audit_log')
          .select('target')
          .where('action', '=', 'grant.given')
          .execute();
        expect(given).toEqual([{ target: sso }]);
      },
    );

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
