import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type AddressObject } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployManifest, manualClock, testContext, type TestContext } from '../../test/helpers.js';
import type { Mailer } from '../mail/mailer.js';
import { createEnterprise } from './enterprises.js';
import { ConflictError, GoneError, InvalidArgumentError, NotFoundError } from './errors.js';
import {
  INVITATION_TTL_DAYS,
  acceptInvitation,
  assignRole,
  createSso,
  deleteConsoleAccess,
  deleteSso,
  describeInvitation,
  getSso,
  getSsoStatus,
  grantConsoleAccess,
  hasConsoleAccess,
  inviteSso,
  isEmailRegistered,
  listRoles,
  removeAllRoles,
  removeRole,
  updateSso,
} from './people.js';
import { createTransaction } from './transactions.js';

const ALICE = { firstName: 'Alice', lastName: 'Ng', email: 'Alice.Ng@Example.com' };
const BOB = { firstName: 'Bob', lastName: 'Ray', email: 'bob@example.com' };

describe('people', () => {
  let t: TestContext;
  let clock: ReturnType<typeof manualClock>;
  let acme: string;
  let other: string;
  beforeEach(async () => {
    clock = manualClock();
    t = await testContext({ PUBLIC_URL: 'https://pal.example.com/' }, { now: clock.now });
    acme = (await createEnterprise(t.ctx, 'Acme')).id;
    other = (await createEnterprise(t.ctx, 'Other')).id;
  });
  afterEach(() => t.close());

  /** The mails in the outbox, parsed, oldest first. */
  const outbox = async () => {
    const dir = join(t.dir, 'outbox');
    let files: string[] = [];
    try {
      files = readdirSync(dir).sort();
    } catch {
      return [];
    }
    return Promise.all(files.map((f) => simpleParser(readFileSync(join(dir, f)))));
  };
  const linkToken = (text: string) => {
    const match = /https:\/\/pal\.example\.com\/services\/invitations\/([A-Za-z0-9_-]{43})/.exec(
      text,
    );
    expect(match, text).not.toBeNull();
    return match![1];
  };

  describe('E1 createSso, E4 isEmailRegistered, E5 getSsoStatus', () => {
    it('creates a global account and an ACTIVE SSO; the address then counts as registered in any case', async () => {
      const sso = await createSso(t.ctx, acme, ALICE);
      expect(sso).toMatch(/^[A-Za-z0-9_-]{22}$/); // 128 random bits
      expect(await getSsoStatus(t.ctx, acme, sso)).toBe('ACTIVE');
      expect(await getSso(t.ctx, acme, sso)).toMatchObject({
        email: 'Alice.Ng@Example.com',
        firstName: 'Alice',
      });
      expect(await isEmailRegistered(t.ctx, 'alice.ng@example.COM')).toBe(true);
      expect(await isEmailRegistered(t.ctx, 'bob@example.com')).toBe(false);
    });

    it('answers 409 for an address already registered, by this or another enterprise', async () => {
      await createSso(t.ctx, acme, ALICE);
      await expect(createSso(t.ctx, acme, ALICE)).rejects.toThrow(ConflictError);
      await expect(
        createSso(t.ctx, other, { ...ALICE, email: 'ALICE.NG@example.com' }),
      ).rejects.toThrow('is already registered');
      expect(await t.ctx.db.selectFrom('ssos').select('id').execute()).toHaveLength(1);
    });

    it.each([
      [{ ...ALICE, email: 'not-an-address' }, /email: "not-an-address" is not an e-mail address/],
      [{ ...ALICE, email: 'a@b@c' }, /email:/],
      [{ ...ALICE, email: '' }, /email: must not be empty/],
      [{ ...ALICE, firstName: '  ' }, /firstName: must not be empty/],
      [{ ...ALICE, lastName: 'x'.repeat(101) }, /lastName: must be at most 100 characters/],
      [{ ...ALICE, firstName: 'A\u0000' }, /firstName: must not contain control characters/],
      [{ firstName: 'A', lastName: 'B' } as typeof ALICE, /email: is required/],
    ])('refuses bad input %j', async (input, message) => {
      await expect(createSso(t.ctx, acme, input)).rejects.toThrow(InvalidArgumentError);
      await expect(createSso(t.ctx, acme, input)).rejects.toThrow(message);
    });

    it('E4 refuses a malformed address; E5 treats another enterprise SSO as missing', async () => {
      await expect(isEmailRegistered(t.ctx, 'nope')).rejects.toThrow(InvalidArgumentError);
      const sso = await createSso(t.ctx, acme, ALICE);
      await expect(getSsoStatus(t.ctx, other, sso)).rejects.toThrow(NotFoundError);
      await expect(getSsoStatus(t.ctx, acme, 'unknown')).rejects.toThrow('SSO "unknown" not found');
    });
  });

  describe('E2 deleteSso', () => {
    it('marks the SSO DELETED and answers true, also a second time', async () => {
      const sso = await createSso(t.ctx, acme, ALICE);
      expect(await deleteSso(t.ctx, acme, sso)).toBe(true);
      expect(await getSsoStatus(t.ctx, acme, sso)).toBe('DELETED');
      expect(await deleteSso(t.ctx, acme, sso)).toBe(true);
      // The account stays: the address is still registered.
      expect(await isEmailRegistered(t.ctx, ALICE.email)).toBe(true);
    });

    it('another enterprise cannot delete it', async () => {
      const sso = await createSso(t.ctx, acme, ALICE);
      await expect(deleteSso(t.ctx, other, sso)).rejects.toThrow(NotFoundError);
      expect(await getSsoStatus(t.ctx, acme, sso)).toBe('ACTIVE');
    });
  });

  describe('E6 updateSso', () => {
    it('updates the account behind the SSO', async () => {
      const sso = await createSso(t.ctx, acme, ALICE);
      expect(
        await updateSso(t.ctx, acme, sso, {
          firstName: 'Alicia',
          lastName: 'Ng-Li',
          email: 'alicia@example.com',
        }),
      ).toBe(true);
      expect(await getSso(t.ctx, acme, sso)).toMatchObject({
        firstName: 'Alicia',
        lastName: 'Ng-Li',
        email: 'alicia@example.com',
      });
      expect(await isEmailRegistered(t.ctx, ALICE.email)).toBe(false);
      // Its own address in another case is no conflict.
      expect(await updateSso(t.ctx, acme, sso, { ...ALICE, email: 'ALICIA@example.com' })).toBe(
        true,
      );
    });

    it('answers 409 when the address belongs to another account, or the SSO is deleted', async () => {
      const alice = await createSso(t.ctx, acme, ALICE);
      await createSso(t.ctx, other, BOB);
      await expect(
        updateSso(t.ctx, acme, alice, { ...ALICE, email: 'BOB@example.com' }),
      ).rejects.toThrow(ConflictError);
      expect((await getSso(t.ctx, acme, alice)).email).toBe(ALICE.email);
      await deleteSso(t.ctx, acme, alice);
      await expect(updateSso(t.ctx, acme, alice, ALICE)).rejects.toThrow(ConflictError);
    });

    it('another enterprise cannot update it, and nothing changes', async () => {
      const sso = await createSso(t.ctx, acme, ALICE);
      await expect(
        updateSso(t.ctx, other, sso, { ...ALICE, firstName: 'Mallory' }),
      ).rejects.toThrow(NotFoundError);
      expect((await getSso(t.ctx, acme, sso)).firstName).toBe('Alice');
      await expect(updateSso(t.ctx, acme, sso, { ...ALICE, email: 'bad' })).rejects.toThrow(
        InvalidArgumentError,
      );
    });
  });

  describe('E3 inviteSso and the invitation link', () => {
    it('answers 404 for an address nobody registered', async () => {
      await expect(inviteSso(t.ctx, acme, 'nobody@example.com')).rejects.toThrow(NotFoundError);
      expect(await outbox()).toHaveLength(0);
    });

    it('creates a pending SSO and mails a link whose GET changes nothing and whose POST activates, once', async () => {
      await createSso(t.ctx, acme, ALICE); // Alice registered through Acme ...
      const sso = await inviteSso(t.ctx, other, 'alice.ng@example.com'); // ... is invited by Other.
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('PENDING_ACTIVATION');

      const [mail] = await outbox();
      // (nodemailer lower-cases the domain; the local part is kept.)
      expect((mail.to as AddressObject).value.map((a) => a.address)).toEqual([
        'Alice.Ng@example.com',
      ]);
      expect(mail.subject).toBe('Invitation from Other');
      expect(mail.from?.text).toContain('no-reply@localhost');
      const token = linkToken(mail.text!);
      expect(mail.html).toContain(`https://pal.example.com/services/invitations/${token}`);
      // Stored only as a hash.
      const stored = await t.ctx.db.selectFrom('invitations').selectAll().execute();
      expect(JSON.stringify(stored)).not.toContain(token);

      // GET (a mail scanner, or the person): shows the page and changes nothing, however often.
      for (let i = 0; i < 3; i++) {
        expect(await describeInvitation(t.ctx, token)).toMatchObject({
          enterpriseName: 'Other',
          email: ALICE.email,
          firstName: 'Alice',
        });
      }
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('PENDING_ACTIVATION');

      // POST: activates.
      expect(await acceptInvitation(t.ctx, token)).toEqual({
        ssoId: sso,
        enterpriseId: other,
        enterpriseName: 'Other',
        email: ALICE.email,
      });
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('ACTIVE');
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      await expect(describeInvitation(t.ctx, token)).rejects.toMatchObject({
        statusCode: 410,
        code: 'TOKEN_EXPIRED',
      });
      // Inviting again once active is a conflict.
      await expect(inviteSso(t.ctx, other, ALICE.email)).rejects.toThrow(ConflictError);
    });

    it('of concurrent confirmations exactly one wins', async () => {
      await createSso(t.ctx, acme, ALICE);
      await inviteSso(t.ctx, other, ALICE.email);
      const token = linkToken((await outbox())[0].text!);
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => acceptInvitation(t.ctx, token)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(
        results.filter((r) => r.status === 'rejected' && r.reason instanceof GoneError),
      ).toHaveLength(7);
    });

    it('answers 410 for unknown, malformed and expired tokens', async () => {
      await createSso(t.ctx, acme, ALICE);
      const sso = await inviteSso(t.ctx, other, ALICE.email);
      const token = linkToken((await outbox())[0].text!);
      await expect(acceptInvitation(t.ctx, 'A'.repeat(43))).rejects.toThrow(GoneError);
      await expect(acceptInvitation(t.ctx, 'garbage')).rejects.toThrow(GoneError);
      await expect(describeInvitation(t.ctx, '')).rejects.toThrow(GoneError);
      clock.advance(INVITATION_TTL_DAYS * 86_400_000);
      await expect(describeInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('PENDING_ACTIVATION');
    });

    it('a second invitation reuses the pending SSO; either link activates it, then both are spent', async () => {
      await createSso(t.ctx, acme, ALICE);
      const first = await inviteSso(t.ctx, other, ALICE.email);
      const second = await inviteSso(t.ctx, other, ALICE.email);
      expect(second).toBe(first);
      const [a, b] = (await outbox()).map((m) => linkToken(m.text!));
      expect(a).not.toBe(b);
      await acceptInvitation(t.ctx, b);
      await expect(acceptInvitation(t.ctx, a)).rejects.toThrow(GoneError);
    });

    it('the link of a deleted SSO is spent', async () => {
      await createSso(t.ctx, acme, ALICE);
      const sso = await inviteSso(t.ctx, other, ALICE.email);
      const token = linkToken((await outbox())[0].text!);
      await deleteSso(t.ctx, other, sso);
      await expect(describeInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
      expect(await getSsoStatus(t.ctx, other, sso)).toBe('DELETED');
    });

    it('keeps nothing when the mail cannot be sent', async () => {
      const failing: Mailer = {
        mode: 'smtp',
        send: async () => {
          throw new Error('relay refused');
        },
        close: () => {},
      };
      const broken = await testContext({}, { mailer: failing });
      try {
        const enterprise = (await createEnterprise(broken.ctx, 'Acme')).id;
        await createSso(broken.ctx, enterprise, ALICE);
        const invitee = (await createEnterprise(broken.ctx, 'Other')).id;
        await expect(inviteSso(broken.ctx, invitee, ALICE.email)).rejects.toMatchObject({
          statusCode: 502,
          code: 'MAIL_FAILED',
        });
        const left = await broken.ctx.db
          .selectFrom('ssos')
          .select('id')
          .where('enterprise_id', '=', invitee)
          .execute();
        expect(left).toEqual([]);
        expect(await broken.ctx.db.selectFrom('invitations').select('id').execute()).toEqual([]);
      } finally {
        await broken.close();
      }
    });
  });

  describe('C3, C4 console access', () => {
    let sso: string;
    beforeEach(async () => {
      await deployManifest(t.ctx, acme, { id: 'directory', modes: { console: true } });
      await deployManifest(t.ctx, acme, { id: 'expense', modes: { transaction: true } });
      await deployManifest(t.ctx, other, { id: 'theirs', modes: { console: true } });
      sso = await createSso(t.ctx, acme, ALICE);
    });

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
