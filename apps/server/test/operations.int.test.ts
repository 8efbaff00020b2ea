// Every implemented operation (P1 P2 C1 C3 C4 T1 T2 T4 T7 T10 E1–E6) over real HTTP: through the
// generated client in JSON and in XML (every XML answer validated against the XSDs by the harness),
// as text/plain through fetch where the answer is simple, and XML when Accept is absent. The
// operations that run workflows (C2 C5 C7 T6 T9 U1) and T3 have their own suite
// (workflows.int.test.ts), and so do the tokens C6 T5 T8 P3 (entry.int.test.ts).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PalClient, WireFormat } from '@pal-workflow/client';
import { operations, type OperationId } from '@pal-workflow/server-skeleton';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { assignRole } from '../src/domain/transaction-roles.js';
import {
  apiError,
  expectError,
  expectedPalInfo,
  form,
  manifestOf,
  PALS_A,
  PUBLIC_URL,
  simpleXml,
  startHarness,
  type Harness,
  type Manifest,
} from './harness.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const OPAQUE_ID = /^[A-Za-z0-9_-]{22,}$/;
const DAY_MS = 86_400_000;

const IMPLEMENTED = [
  'P1',
  'P2',
  'C1',
  'C3',
  'C4',
  'T1',
  'T2',
  'T4',
  'T7',
  'T10',
  'E1',
  'E2',
  'E3',
  'E4',
  'E5',
  'E6',
];
/**
 * Operations with suites of their own: the workflow runs and T3 (workflows.int.test.ts), the
 * tokens (entry.int.test.ts).
 */
const TESTED_ELSEWHERE = ['C2', 'C5', 'C7', 'T6', 'T9', 'U1', 'T3', 'C6', 'T5', 'T8', 'P3'];
const ALL_IDS = Object.keys(operations) as OperationId[];
const specIdOf = (id: OperationId) => operations[id].specId as string;

it('every operation is covered: here, or by its own suite', () => {
  expect(ALL_IDS.map(specIdOf).sort()).toEqual([...IMPLEMENTED, ...TESTED_ELSEWHERE].sort());
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const visible = (m: Manifest) => !m.test && !m.installed;
const byId = (x: { id?: string }, y: { id?: string }) =>
  x.id! < y.id! ? -1 : x.id! > y.id! ? 1 : 0;
const withDates = (m: Manifest) => ({
  ...expectedPalInfo(m),
  createDate: expect.stringMatching(ISO),
  lastModifiedDate: expect.stringMatching(ISO),
});

describe.each(['json', 'xml'] as const)(
  'the implemented operations through the generated client in %s',
  (format: WireFormat) => {
    const a = (): PalClient => h.a[format];
    const b = (): PalClient => h.b[format];
    const lastExchange = () => h.exchanges.at(-1)!;
    const mediaType =
      format === 'xml' ? 'application/xml; charset=utf-8' : 'application/json; charset=utf-8';

    it('P2 answers each pal as deployed, absent members absent; 404 for an unknown id', async () => {
      for (const m of PALS_A) {
        const info = await a().pals.getPal({ id: m.id });
        expect(info, m.id).toEqual(withDates(m));
        expect(lastExchange().type).toBe(mediaType);
        expect(Date.parse(info.lastModifiedDate!)).toBeGreaterThanOrEqual(
          Date.parse(info.createDate!),
        );
      }
      const bare = lastExchange().body;
      if (format === 'json') {
        expect(Object.keys(JSON.parse(bare)).sort()).toEqual(
          [
            'id',
            'createDate',
            'lastModifiedDate',
            'deployed',
            'modeTransaction',
            'modeConsole',
            'modeWeb',
            'shadow',
            'shell',
          ].sort(),
        );
      } else {
        expect(bare).not.toMatch(/<(name|description|category|branchName)\b/);
        expect(bare).not.toMatch(/xsi:nil/);
      }
      // The same id in the other enterprise is another pal.
      expect(await b().pals.getPal({ id: 'expense-approval' })).toEqual(
        withDates(manifestOf('expense-approval', h.b.pals)),
      );
      await apiError(a().pals.getPal({ id: 'no-such-pal' }), 404, 'NOT_FOUND');
      expect(lastExchange().type).toBe(mediaType);
    });

    it('P1 lists the visible pals in id order with X-Total-Count, each as P2 shows it', async () => {
      const all = await a().pals.searchPalsRaw({});
      expect(all.raw.status).toBe(200);
      const items = await all.value();
      const expected = PALS_A.filter(visible).sort(byId);
      expect(items.map((p) => p.id)).toEqual(expected.map((m) => m.id));
      expect(all.raw.headers.get('X-Total-Count')).toBe(String(expected.length));
      for (const item of items) expect(item).toEqual(await a().pals.getPal({ id: item.id! }));

      const everything = await a().pals.searchPalsRaw({
        includeTest: true,
        includeInstalled: true,
      });
      expect((await everything.value()).map((p) => p.id)).toEqual(PALS_A.map((m) => m.id).sort());
      expect(everything.raw.headers.get('X-Total-Count')).toBe(String(PALS_A.length));

      const none = await a().pals.searchPalsRaw({ name: 'no pal is called this' });
      expect(await none.value()).toEqual([]);
      expect(none.raw.headers.get('X-Total-Count')).toBe('0');
    });

    it('C1 lists the visible console-mode pals with X-Total-Count', async () => {
      const listed = await a().console.listConsolePalsRaw({});
      const expected = PALS_A.filter((m) => visible(m) && m.modes?.console).sort(byId);
      expect(expected.length).toBeGreaterThan(1);
      expect(await listed.value()).toEqual(expected.map(withDates));
      expect(listed.raw.headers.get('X-Total-Count')).toBe(String(expected.length));
      const withHidden = await a().console.listConsolePalsRaw({
        includeTest: true,
        includeInstalled: true,
      });
      expect((await withHidden.value()).map((p) => p.id)).toEqual(
        PALS_A.filter((m) => m.modes?.console)
          .map((m) => m.id)
          .sort(),
      );
    });

    it('T1 creates a transaction from a transaction-mode pal; T10 answers it; T2 finds it', async () => {
      const before = Date.now();
      const id = await a().transactions.createTransaction({ palId: 'expense-approval' });
      expect(id).toMatch(OPAQUE_ID);
      const info = await a().transactions.getTransaction({ id });
      const created = Date.parse(info.createDate!);
      expect(created).toBeGreaterThanOrEqual(before - 1000);
      const pal = manifestOf('expense-approval');
      expect(info).toEqual({
        id,
        name: pal.name,
        description: pal.description,
        category: pal.category,
        status: 'NEW',
        webServiceStatus: 'IDLE',
        createDate: expect.stringMatching(ISO),
        modifiedDate: info.createDate,
        executeEndDate: new Date(created + pal.lifetimes!.executeDays! * DAY_MS).toISOString(),
        accessEndDate: new Date(created + pal.lifetimes!.accessDays! * DAY_MS).toISOString(),
        archiveEndDate: new Date(created + pal.lifetimes!.archiveDays! * DAY_MS).toISOString(),
        test: false,
      });

      // No lifetimes in the manifest: no end dates. A test pal gives a test transaction.
      const travel = await a().transactions.createTransaction({ palId: 'travel-expenses' });
      expect(travel).not.toBe(id);
      const travelInfo = await a().transactions.getTransaction({ id: travel });
      expect(travelInfo).toMatchObject({
        id: travel,
        name: 'Travel Expenses',
        category: 'finance',
        test: false,
      });
      for (const key of ['executeEndDate', 'accessEndDate', 'archiveEndDate'])
        expect(travelInfo[key as keyof typeof travelInfo]).toBeUndefined();
      const sandbox = await a().transactions.createTransaction({ palId: 'expense-sandbox' });
      expect(await a().transactions.getTransaction({ id: sandbox })).toMatchObject({
        id: sandbox,
        test: true,
      });

      const found = await a().transactions.searchTransactionsRaw({ palId: 'expense-approval' });
      const listed = await found.value();
      const ids = listed.map((t) => t.id);
      expect(ids).toContain(id);
      expect(ids).not.toContain(travel);
      expect(found.raw.headers.get('X-Total-Count')).toBe(String(ids.length));
      expect(listed.find((t) => t.id === id)).toEqual(info);
      const test = await a().transactions.searchTransactions({ palId: 'expense-sandbox' });
      expect(test).toEqual([]);
      expect(
        (
          await a().transactions.searchTransactions({ palId: 'expense-sandbox', includeTest: true })
        ).map((t) => t.id),
      ).toContain(sandbox);

      // Not a transaction-mode pal: 400; no such pal: 404; no such transaction: 404.
      await apiError(
        a().transactions.createTransaction({ palId: 'team-directory' }),
        400,
        'INVALID_ARGUMENT',
      );
      await apiError(
        a().transactions.createTransaction({ palId: 'bare' }),
        400,
        'INVALID_ARGUMENT',
      );
      await apiError(
        a().transactions.createTransaction({ palId: 'no-such-pal' }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        a().transactions.getTransaction({ id: 'AAAAAAAAAAAAAAAAAAAAAA' }),
        404,
        'NOT_FOUND',
      );
    });

    it('E1 creates an ACTIVE SSO; E4 and E5 see it; E6 updates it; E2 deletes it', async () => {
      const email = `ann.${format}@example.test`;
      expect(await a().enterprise.isEmailRegistered({ email })).toBe(false);
      const sso = await a().enterprise.createSso({
        firstName: 'Ann',
        lastName: "O'Neil & <Co>",
        email,
      });
      expect(sso).toMatch(OPAQUE_ID);
      expect(await a().enterprise.isEmailRegistered({ email })).toBe(true);
      // Accounts are global, and addresses are compared without case.
      expect(await b().enterprise.isEmailRegistered({ email: email.toUpperCase() })).toBe(true);
      expect(await a().enterprise.getSsoStatus({ sso })).toBe('ACTIVE');

      const moved = `ann.new.${format}@example.test`;
      expect(
        await a().enterprise.updateSso({ sso, firstName: 'Anne', lastName: 'Neil', email: moved }),
      ).toBe(true);
      expect(await a().enterprise.isEmailRegistered({ email })).toBe(false);
      expect(await a().enterprise.isEmailRegistered({ email: moved })).toBe(true);
      // Its own address again (in another case) is no conflict.
      expect(
        await a().enterprise.updateSso({
          sso,
          firstName: 'Anne',
          lastName: 'Neil',
          email: moved.toUpperCase(),
        }),
      ).toBe(true);
      expect(await a().enterprise.getSsoStatus({ sso })).toBe('ACTIVE');

      expect(await a().enterprise.deleteSso({ sso })).toBe(true);
      expect(await a().enterprise.getSsoStatus({ sso })).toBe('DELETED');
      expect(await a().enterprise.deleteSso({ sso })).toBe(true);
      expect(await a().enterprise.getSsoStatus({ sso })).toBe('DELETED');
      // A deleted SSO cannot be updated.
      await apiError(
        a().enterprise.updateSso({ sso, firstName: 'X', lastName: 'Y', email: moved }),
        409,
        'CONFLICT',
      );
      await apiError(
        a().enterprise.getSsoStatus({ sso: 'AAAAAAAAAAAAAAAAAAAAAA' }),
        404,
        'NOT_FOUND',
      );
    });

    it('E3 invites a registered person: a PENDING_ACTIVATION SSO and a mail in the outbox', async () => {
      const email = `bo.${format}@example.test`;
      await b().enterprise.createSso({ firstName: 'Bo', lastName: 'Diddley', email });
      const outbox = join(h.dataDir, 'outbox');
      const before = new Set(safeList(outbox));
      const sso = await a().enterprise.inviteSso({ email });
      expect(sso).toMatch(OPAQUE_ID);
      expect(await a().enterprise.getSsoStatus({ sso })).toBe('PENDING_ACTIVATION');

      const added = safeList(outbox).filter((f) => !before.has(f));
      expect(added).toHaveLength(1);
      const mail = await simpleParser(readFileSync(join(outbox, added[0]!)));
      expect(mail.to && 'value' in mail.to ? mail.to.value[0]?.address : undefined).toBe(email);
      expect(mail.subject).toBe(`Invitation from ${h.a.name}`);
      expect(mail.text).toMatch(new RegExp(`${PUBLIC_URL}/services/invitations/[A-Za-z0-9_-]{43}`));

      // Invited again while pending, within the hour: the same SSO, and no new mail.
      expect(await a().enterprise.inviteSso({ email: email.toUpperCase() })).toBe(sso);
      expect(safeList(outbox).filter((f) => !before.has(f))).toHaveLength(1);
      await apiError(
        a().enterprise.inviteSso({ email: `nobody.${format}@example.test` }),
        404,
        'NOT_FOUND',
      );
    });

    it('C3 grants console access per profile and C4 removes it: true, then false', async () => {
      const sso = await a().enterprise.createSso({
        firstName: 'Cy',
        lastName: 'Young',
        email: `cy.${format}@example.test`,
      });
      const personal = { palId: 'leave-request', ssoId: sso, useEnterpriseProfile: false };
      const enterprise = { ...personal, useEnterpriseProfile: true };
      expect(await a().console.grantConsolePalAccess(personal)).toBe(true);
      expect(await a().console.grantConsolePalAccess(personal)).toBe(true);
      // The enterprise profile has no grant yet.
      expect(await a().console.deleteConsolePalAccess(enterprise)).toBe(false);
      expect(await a().console.grantConsolePalAccess(enterprise)).toBe(true);
      expect(await a().console.deleteConsolePalAccess(enterprise)).toBe(true);
      expect(await a().console.deleteConsolePalAccess(enterprise)).toBe(false);
      // Without useEnterpriseProfile: the personal profile.
      expect(await a().console.deleteConsolePalAccess({ palId: 'leave-request', ssoId: sso })).toBe(
        true,
      );
      expect(await a().console.deleteConsolePalAccess(personal)).toBe(false);

      await apiError(
        a().console.grantConsolePalAccess({ ...personal, palId: 'expense-approval' }),
        400,
        'INVALID_ARGUMENT',
      );
      await apiError(
        a().console.grantConsolePalAccess({ ...personal, palId: 'no-such-pal' }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        a().console.grantConsolePalAccess({ ...personal, ssoId: 'AAAAAAAAAAAAAAAAAAAAAA' }),
        404,
        'NOT_FOUND',
      );
      await a().enterprise.deleteSso({ sso });
      await apiError(a().console.grantConsolePalAccess(personal), 409, 'CONFLICT');
    });

    it('T7 removes the roles of an SSO on one transaction, T4 across the enterprise; each says how many', async () => {
      const sso = await a().enterprise.createSso({
        firstName: 'Di',
        lastName: 'Prima',
        email: `di.${format}@example.test`,
      });
      const other = await a().enterprise.createSso({
        firstName: 'Ed',
        lastName: 'Wood',
        email: `ed.${format}@example.test`,
      });
      const t1 = await a().transactions.createTransaction({ palId: 'leave-request' });
      const t2 = await a().transactions.createTransaction({ palId: 'travel-expenses' });
      for (const role of ['participant', 'reviewer'])
        await assignRole(h.domain, h.a.enterpriseId, t1, sso, role);
      await assignRole(h.domain, h.a.enterpriseId, t2, sso, 'owner');
      await assignRole(h.domain, h.a.enterpriseId, t1, other, 'participant');

      expect(await a().transactions.searchTransactions({ sso })).toHaveLength(2);
      expect(
        await a().transactions.removeTransactionRole({ transactionId: t1, userSSO: sso }),
      ).toBe(2);
      expect(
        await a().transactions.removeTransactionRole({ transactionId: t1, userSSO: sso }),
      ).toBe(0);
      expect((await a().transactions.searchTransactions({ sso })).map((t) => t.id)).toEqual([t2]);
      expect((await a().transactions.searchTransactions({ sso: other })).map((t) => t.id)).toEqual([
        t1,
      ]);

      await assignRole(h.domain, h.a.enterpriseId, t1, sso, 'participant');
      expect(await a().transactions.removeAllRoles({ userSSO: sso })).toBe(2);
      expect(await a().transactions.removeAllRoles({ userSSO: sso })).toBe(0);
      expect(await a().transactions.searchTransactions({ sso })).toEqual([]);
      // The other SSO keeps its role.
      expect((await a().transactions.searchTransactions({ sso: other })).map((t) => t.id)).toEqual([
        t1,
      ]);

      await apiError(
        a().transactions.removeTransactionRole({
          transactionId: 'AAAAAAAAAAAAAAAAAAAAAA',
          userSSO: sso,
        }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        a().transactions.removeTransactionRole({
          transactionId: t1,
          userSSO: 'AAAAAAAAAAAAAAAAAAAAAA',
        }),
        404,
        'NOT_FOUND',
      );
      await apiError(
        a().transactions.removeAllRoles({ userSSO: 'AAAAAAAAAAAAAAAAAAAAAA' }),
        404,
        'NOT_FOUND',
      );
    });
  },
);

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
}

describe('simple answers as text/plain and as XML without Accept, through fetch', () => {
  const text = async (path: string, body?: URLSearchParams) => {
    const answer = await h.http(path, { accept: 'text/plain', body });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.type).toBe('text/plain; charset=utf-8');
    return answer.text;
  };
  const ROOT = '/services/rest';

  it('E1–E6, T1, T4, T7, C3, C4 answer their bare value as text', async () => {
    const email = 'tex@example.test';
    expect(
      await text(`${ROOT}/enterprises/sso/registered?email=${encodeURIComponent(email)}`),
    ).toBe('false');
    const sso = await text(
      `${ROOT}/enterprises/sso`,
      form({ firstName: 'Tex', lastName: 'Avery', email }),
    );
    expect(sso).toMatch(OPAQUE_ID);
    expect(
      await text(`${ROOT}/enterprises/sso/registered?email=${encodeURIComponent(email)}`),
    ).toBe('true');
    expect(await text(`${ROOT}/enterprises/sso/status?sso=${sso}`)).toBe('ACTIVE');
    expect(
      await text(
        `${ROOT}/enterprises/sso/update`,
        form({ sso, firstName: 'Tex', lastName: 'A.', email }),
      ),
    ).toBe('true');

    const tx = await text(`${ROOT}/transactions`, form({ palId: 'leave-request' }));
    expect(tx).toMatch(OPAQUE_ID);
    expect((await h.a.json.transactions.getTransaction({ id: tx })).name).toBe('Leave Request');
    await assignRole(h.domain, h.a.enterpriseId, tx, sso, 'participant');
    await assignRole(h.domain, h.a.enterpriseId, tx, sso, 'reviewer');
    expect(await text(`${ROOT}/transactions/${tx}/removeRole`, form({ userSSO: sso }))).toBe('2');
    await assignRole(h.domain, h.a.enterpriseId, tx, sso, 'owner');
    expect(await text(`${ROOT}/transactions/removeAllRoles`, form({ userSSO: sso }))).toBe('1');

    const grant = form({ ssoId: sso, useEnterpriseProfile: 'TRUE' });
    expect(await text(`${ROOT}/console/leave-request/grantConsolePalAccess`, grant)).toBe('true');
    expect(await text(`${ROOT}/console/leave-request/deleteConsolePalAccess`, grant)).toBe('true');
    expect(await text(`${ROOT}/console/leave-request/deleteConsolePalAccess`, grant)).toBe('false');

    const invitee = 'tex.invited@example.test';
    await h.b.json.enterprise.createSso({ firstName: 'In', lastName: 'Vited', email: invitee });
    const invited = await text(`${ROOT}/enterprises/sso/invite`, form({ email: invitee }));
    expect(invited).toMatch(OPAQUE_ID);
    expect(await text(`${ROOT}/enterprises/sso/status?sso=${invited}`)).toBe('PENDING_ACTIVATION');
    expect(await text(`${ROOT}/enterprises/sso/delete`, form({ sso }))).toBe('true');
    expect(await text(`${ROOT}/enterprises/sso/status?sso=${sso}`)).toBe('DELETED');
  });

  it('answers XML without Accept: simple roots and structured ones, valid against the XSDs', async () => {
    const email = 'xml.default@example.test';
    const sso = simpleXml(
      await h.http(`${ROOT}/enterprises/sso`, {
        body: form({ firstName: 'X', lastName: 'Ml', email }),
      }),
      'string',
    );
    expect(sso).toMatch(OPAQUE_ID);
    expect(
      simpleXml(
        await h.http(`${ROOT}/enterprises/sso/registered?email=${encodeURIComponent(email)}`),
        'boolean',
      ),
    ).toBe(true);
    expect(
      simpleXml(
        await h.http(`${ROOT}/transactions/removeAllRoles`, {
          body: form({ userSSO: String(sso) }),
        }),
        'int',
      ),
    ).toBe(0);
    const pal = await h.http(`${ROOT}/pals/team-directory`);
    expect(pal.status).toBe(200);
    expect(pal.type).toBe('application/xml; charset=utf-8');
    expect(pal.text).toMatch(/<pal:palInfo xmlns:pal="urn:pal-workflow:pal">/);
    const list = await h.http(`${ROOT}/pals`, { accept: '*/*' });
    expect(list.text).toMatch(/<pal:palInfoList xmlns:pal="urn:pal-workflow:pal"><palInfo>/);
  });

  it('answers 406 for structured answers asked as text/plain, and changes nothing', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'leave-request' });
    for (const path of [
      `${ROOT}/pals`,
      `${ROOT}/pals/bare`,
      `${ROOT}/console/consolePalList`,
      `${ROOT}/transactions`,
      `${ROOT}/transactions/${tx}`,
    ]) {
      expectError(await h.http(path, { accept: 'text/plain' }), 406, 'NOT_ACCEPTABLE');
    }
    // Negotiated before the handler runs: a 406 on T1 creates nothing.
    const count = async () =>
      Number(
        (
          await h.a.json.transactions.searchTransactionsRaw({ palId: 'leave-request' })
        ).raw.headers.get('X-Total-Count'),
      );
    const before = await count();
    expectError(
      await h.http(`${ROOT}/transactions`, {
        accept: 'image/png',
        body: form({ palId: 'leave-request' }),
      }),
      406,
      'NOT_ACCEPTABLE',
    );
    expect(await count()).toBe(before);
  });
});

describe('deploying a pal id again', () => {
  it('replaces what P2, P1 and T1 see; transactions made before keep their names', async () => {
    const before = await h.a.json.pals.getPal({ id: 'travel-expenses' });
    const oldTx = await h.a.json.transactions.createTransaction({ palId: 'travel-expenses' });
    const manifest = {
      ...manifestOf('travel-expenses'),
      name: 'Travel Claims',
      description: 'The new way to claim',
    };
    const folder = join(h.dataDir, '..', 'redeploy', manifest.id);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'pal.json'), JSON.stringify(manifest));
    expect((await deployPal(h.domain, h.a.enterpriseId, folder)).version).toBe(2);

    for (const client of [h.a.json, h.a.xml]) {
      const after = await client.pals.getPal({ id: 'travel-expenses' });
      expect(after).toEqual({ ...withDates(manifest), createDate: before.createDate });
      expect(Date.parse(after.lastModifiedDate!)).toBeGreaterThanOrEqual(
        Date.parse(before.lastModifiedDate!),
      );
      expect(
        (await client.pals.searchPals({ name: 'travel claims', exactName: false })).map(
          (p) => p.id,
        ),
      ).toEqual(['travel-expenses']);
      expect(await client.pals.searchPals({ name: 'Travel Expenses', exactName: true })).toEqual(
        [],
      );
    }
    expect((await h.a.json.transactions.getTransaction({ id: oldTx })).name).toBe(
      'Travel Expenses',
    );
    const newTx = await h.a.json.transactions.createTransaction({ palId: 'travel-expenses' });
    expect(await h.a.json.transactions.getTransaction({ id: newTx })).toMatchObject({
      name: 'Travel Claims',
      description: 'The new way to claim',
    });
  });
});

describe('what went over the wire', () => {
  it('every status answered is one the bundled OpenAPI declares for its operation', () => {
    expect(h.undeclaredStatuses()).toEqual([]);
  });

  it('every operation of this suite was answered 200 in both formats', () => {
    const seen = new Map<string, Set<string>>();
    for (const e of h.exchanges) {
      const id = h.operationOf(e.method, e.path);
      if (!id) continue;
      const format = e.type.split(';')[0]!;
      const key = `${id} ${e.status}`;
      if (!seen.has(key)) seen.set(key, new Set());
      seen.get(key)!.add(format);
    }
    for (const id of ALL_IDS.filter((x) => !TESTED_ELSEWHERE.includes(specIdOf(x)))) {
      expect([...(seen.get(`${id} 200`) ?? [])].sort(), `${specIdOf(id)} ${id}`).toEqual(
        expect.arrayContaining(['application/json', 'application/xml']),
      );
    }
    for (const specId of ['T1', 'T4', 'T7', 'C3', 'C4', 'E1', 'E2', 'E3', 'E4', 'E5', 'E6']) {
      const id = ALL_IDS.find((x) => specIdOf(x) === specId)!;
      expect(seen.get(`${id} 200`), specId).toContain('text/plain');
    }
  });

  it('every XML answer was valid against the XSDs, with the right root', () => {
    const xml = h.exchanges.filter((e) => e.type.startsWith('application/xml'));
    expect(xml.length).toBeGreaterThan(90);
    expect(h.xmlValidated()).toBe(xml.length);
    for (const e of xml) {
      const id = h.operationOf(e.method, e.path);
      const root = /^(?:<\?xml[^>]*\?>\s*)?<pal:(\w+) xmlns:pal="urn:pal-workflow:pal"/.exec(
        e.body,
      )?.[1];
      const spec = id && operations[id].response;
      const expected =
        e.status !== 200 ? 'errorResult' : spec && 'root' in spec ? spec.root : undefined;
      expect(root, `${e.method} ${e.path} ${e.status}`).toBe(expected);
    }
  });
});
