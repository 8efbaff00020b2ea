import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestContext } from '../../test/helpers.js';
import { ALICE, BOB, acmeAndOther } from '../../test/people-fixtures.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';
import { inviteSso } from './invitations.js';
import {
  createSso,
  deleteSso,
  getSso,
  getSsoStatus,
  isEmailRegistered,
  updateSso,
} from './ssos.js';

describe('SSOs', () => {
  let t: TestContext;
  let acme: string;
  let other: string;
  beforeEach(async () => {
    ({ t, acme, other } = await acmeAndOther());
  });
  afterEach(() => t.close());

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

    it('takes one mailbox as one account however its address is written: Unicode form, width, IDNA', async () => {
      const nfd = 'Eve\u0301@Exa\u0308mple.com'; // as a Mac sends "Evé@Exämple.com"
      const sso = await createSso(t.ctx, acme, { ...ALICE, email: nfd });
      // Kept as typed, in NFC: the address check had refused the combining marks.
      expect(await getSso(t.ctx, acme, sso)).toMatchObject({ email: 'Evé@Exämple.com' });
      for (const same of [
        'evé@exämple.com',
        'EVÉ@XN--EXMPLE-CUA.COM', // the domain as DNS has it
        'ｅｖé@ｅｘäｍｐｌｅ.ｃｏｍ', // fullwidth letters
      ]) {
        expect(await isEmailRegistered(t.ctx, same), same).toBe(true);
        await expect(createSso(t.ctx, other, { ...ALICE, email: same }), same).rejects.toThrow(
          'is already registered',
        );
      }
      expect(await isEmailRegistered(t.ctx, 'eve@example.com')).toBe(false);
      // What is another mailbox stays another: a domain read as a number (the URL parser's IPv4)
      // is compared as written, and one IDNA refuses is not folded into a name it allows.
      await createSso(t.ctx, acme, { ...BOB, email: 'bob@127.0.0.1' });
      for (const other of ['bob@2130706433', 'bob@0x7f.1', 'bob@127.1'])
        expect(await isEmailRegistered(t.ctx, other), other).toBe(false);
      await createSso(t.ctx, acme, { ...BOB, email: 'ann@x\u2488com' });
      expect(await isEmailRegistered(t.ctx, 'ann@x1.com')).toBe(false);
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

    it('answers 409 and changes nothing while another enterprise holds a live SSO of the account', async () => {
      const alice = await createSso(t.ctx, acme, ALICE);
      const invited = await inviteSso(t.ctx, other, ALICE.email);
      for (const [enterprise, sso] of [
        [acme, alice],
        [other, invited],
      ] as const) {
        await expect(
          updateSso(t.ctx, enterprise, sso, { ...ALICE, email: 'mallory@example.com' }),
        ).rejects.toThrow('another enterprise also holds an SSO of this person');
      }
      expect(await getSso(t.ctx, acme, alice)).toMatchObject(ALICE);
      // Once the other enterprise's SSO is DELETED, the account is Acme's alone again.
      await deleteSso(t.ctx, other, invited);
      expect(await updateSso(t.ctx, acme, alice, { ...ALICE, firstName: 'Alicia' })).toBe(true);
    });

    it("answers 409 for an invitation not yet accepted, even once the person's first enterprise let them go", async () => {
      const alice = await createSso(t.ctx, acme, ALICE);
      await deleteSso(t.ctx, acme, alice);
      const invited = await inviteSso(t.ctx, other, ALICE.email);
      await expect(
        updateSso(t.ctx, other, invited, { ...ALICE, email: 'mallory@example.com' }),
      ).rejects.toThrow("has not accepted this enterprise's invitation yet");
      expect(await getSso(t.ctx, other, invited)).toMatchObject(ALICE);
      expect(await isEmailRegistered(t.ctx, 'mallory@example.com')).toBe(false);
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
});
