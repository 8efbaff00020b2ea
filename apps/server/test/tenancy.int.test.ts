// Tenant isolation over real HTTP: the second enterprise's pal, transaction and SSO ids answer 404
// to the first enterprise on every operation that takes an id (P2, T1 palId, T10, T7, T4, C3, C4,
// E2, E5, E6), exactly as an id that exists nowhere does, in JSON and in XML; searches never show
// them; and nothing of the second enterprise changes, as its own calls show afterwards. A person
// both enterprises hold an SSO of cannot be rewritten by either (E6 409), also when the two race,
// on two nodes of one PostgreSQL database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSso } from '../src/domain/ssos.js';
import { assignRole } from '../src/domain/transaction-roles.js';
import { startServer } from '../src/server.js';
import { engine } from './engine.js';
import { expectError, form, startHarness, type Answer, type Harness } from './harness.js';

let h: Harness;
const ROOT = '/services/rest';
const NOWHERE = 'AAAAAAAAAAAAAAAAAAAAAA';

// What the second enterprise (Globex) owns.
let bTx: string;
let bSso: string;
let bGrantedSso: string;
const bPal = 'globex-secret';
// The first enterprise's own ids, to mix with Globex's.
let aTx: string;
let aSso: string;

/** Globex's state, read through Globex's own calls. */
async function globexState() {
  const c = h.b.json;
  return {
    pal: await c.pals.getPal({ id: bPal }),
    pals: await c.pals.searchPals({ includeTest: true, includeInstalled: true }),
    tx: await c.transactions.getTransaction({ id: bTx }),
    txs: await c.transactions.searchTransactions({ includeTest: true }),
    bySso: (await c.transactions.searchTransactions({ sso: bSso })).map((t) => t.id),
    byGranted: (await c.transactions.searchTransactions({ sso: bGrantedSso })).map((t) => t.id),
    status: await c.enterprise.getSsoStatus({ sso: bSso }),
    grantedStatus: await c.enterprise.getSsoStatus({ sso: bGrantedSso }),
    oldEmail: await c.enterprise.isEmailRegistered({ email: 'gina@globex.test' }),
    newEmail: await c.enterprise.isEmailRegistered({ email: 'taken-over@acme.test' }),
  };
}

beforeAll(async () => {
  h = await startHarness();
  bTx = await h.b.json.transactions.createTransaction({ palId: bPal });
  bSso = await h.b.json.enterprise.createSso({
    firstName: 'Gina',
    lastName: 'Globex',
    email: 'gina@globex.test',
  });
  bGrantedSso = await h.b.json.enterprise.createSso({
    firstName: 'Gus',
    lastName: 'Globex',
    email: 'gus@globex.test',
  });
  await assignRole(h.domain, h.b.enterpriseId, bTx, bSso, 'participant');
  await assignRole(h.domain, h.b.enterpriseId, bTx, bGrantedSso, 'owner');
  expect(
    await h.b.json.console.grantConsolePalAccess({
      palId: bPal,
      ssoId: bGrantedSso,
      useEnterpriseProfile: true,
    }),
  ).toBe(true);
  aTx = await h.a.json.transactions.createTransaction({ palId: 'leave-request' });
  aSso = await h.a.json.enterprise.createSso({
    firstName: 'Al',
    lastName: 'Acme',
    email: 'al@acme.test',
  });
});
afterAll(() => h?.close());

/**
 * Each request that names one of Globex's ids, and the same request naming an id that exists
 * nowhere. Both must answer the same 404, message and all (the id aside).
 */
function probes(): {
  what: string;
  id: string;
  request: (id: string) => [string, { method?: string; body?: URLSearchParams }];
}[] {
  return [
    { what: 'P2 pal', id: bPal, request: (id) => [`${ROOT}/pals/${id}`, {}] },
    {
      what: 'T1 palId',
      id: bPal,
      request: (id) => [`${ROOT}/transactions`, { body: form({ palId: id }) }],
    },
    { what: 'T10 transaction', id: bTx, request: (id) => [`${ROOT}/transactions/${id}`, {}] },
    {
      what: 'T7 transaction',
      id: bTx,
      request: (id) => [`${ROOT}/transactions/${id}/removeRole`, { body: form({ userSSO: aSso }) }],
    },
    {
      what: 'T7 transaction and SSO',
      id: bTx,
      request: (id) => [`${ROOT}/transactions/${id}/removeRole`, { body: form({ userSSO: bSso }) }],
    },
    {
      what: 'T7 SSO on an own transaction',
      id: bSso,
      request: (id) => [`${ROOT}/transactions/${aTx}/removeRole`, { body: form({ userSSO: id }) }],
    },
    {
      what: 'T4 SSO',
      id: bSso,
      request: (id) => [`${ROOT}/transactions/removeAllRoles`, { body: form({ userSSO: id }) }],
    },
    {
      what: 'C3 pal',
      id: bPal,
      request: (id) => [
        `${ROOT}/console/${id}/grantConsolePalAccess`,
        { body: form({ ssoId: aSso }) },
      ],
    },
    {
      what: 'C3 pal and SSO',
      id: bPal,
      request: (id) => [
        `${ROOT}/console/${id}/grantConsolePalAccess`,
        { body: form({ ssoId: bGrantedSso, useEnterpriseProfile: 'true' }) },
      ],
    },
    {
      what: 'C3 SSO on an own pal',
      id: bSso,
      request: (id) => [
        `${ROOT}/console/leave-request/grantConsolePalAccess`,
        { body: form({ ssoId: id }) },
      ],
    },
    {
      what: 'C4 pal and SSO',
      id: bPal,
      request: (id) => [
        `${ROOT}/console/${id}/deleteConsolePalAccess`,
        { body: form({ ssoId: bGrantedSso, useEnterpriseProfile: 'true' }) },
      ],
    },
    {
      what: 'C4 SSO on an own pal',
      id: bGrantedSso,
      request: (id) => [
        `${ROOT}/console/leave-request/deleteConsolePalAccess`,
        { body: form({ ssoId: id, useEnterpriseProfile: 'true' }) },
      ],
    },
    {
      what: 'E2 SSO',
      id: bSso,
      request: (id) => [`${ROOT}/enterprises/sso/delete`, { body: form({ sso: id }) }],
    },
    {
      what: 'E5 SSO',
      id: bSso,
      request: (id) => [`${ROOT}/enterprises/sso/status?sso=${encodeURIComponent(id)}`, {}],
    },
    {
      what: 'E6 SSO',
      id: bSso,
      request: (id) => [
        `${ROOT}/enterprises/sso/update`,
        {
          body: form({
            sso: id,
            firstName: 'Taken',
            lastName: 'Over',
            email: 'taken-over@acme.test',
          }),
        },
      ],
    },
  ];
}

describe('the second enterprise’s ids, used by the first', () => {
  it('answer 404 on every operation that takes an id, like an id that exists nowhere, and change nothing', async () => {
    const before = await globexState();
    expect(before.bySso).toEqual([bTx]);
    expect(before.status).toBe('ACTIVE');
    expect(before.oldEmail).toBe(true);
    expect(before.newEmail).toBe(false);

    for (const format of ['xml', 'json'] as const) {
      const accept = format === 'json' ? 'application/json' : 'application/xml';
      for (const probe of probes()) {
        const [path, init] = probe.request(probe.id);
        const theirs = await h.http(path, { ...init, accept });
        const messages = expectError(theirs, 404, 'NOT_FOUND', format);
        const [nowherePath, nowhereInit] = probe.request(NOWHERE);
        const nowhere = await h.http(nowherePath, { ...nowhereInit, accept });
        const nowhereMessages = expectError(nowhere, 404, 'NOT_FOUND', format);
        // The same answer but for the id itself: nothing tells an existing foreign id apart.
        expect(
          messages.map((m) => m.split(probe.id).join('<id>')),
          probe.what,
        ).toEqual(nowhereMessages.map((m) => m.split(NOWHERE).join('<id>')));
        expect(sameHeaders(theirs, nowhere), probe.what).toBe(true);
      }
    }
    // Globex sees exactly what it saw before.
    expect(await globexState()).toEqual(before);
    // Its console grant is still there: removing it is true once, then false.
    expect(
      await h.b.json.console.deleteConsolePalAccess({
        palId: bPal,
        ssoId: bGrantedSso,
        useEnterpriseProfile: true,
      }),
    ).toBe(true);
    expect(
      await h.b.json.console.deleteConsolePalAccess({
        palId: bPal,
        ssoId: bGrantedSso,
        useEnterpriseProfile: true,
      }),
    ).toBe(false);
  });

  it('answer 404 through the generated client in both formats', async () => {
    for (const client of [h.a.json, h.a.xml]) {
      const calls: [string, () => Promise<unknown>][] = [
        ['P2', () => client.pals.getPal({ id: bPal })],
        ['T1', () => client.transactions.createTransaction({ palId: bPal })],
        ['T10', () => client.transactions.getTransaction({ id: bTx })],
        [
          'T7',
          () => client.transactions.removeTransactionRole({ transactionId: bTx, userSSO: bSso }),
        ],
        ['T4', () => client.transactions.removeAllRoles({ userSSO: bSso })],
        ['C3', () => client.console.grantConsolePalAccess({ palId: bPal, ssoId: aSso })],
        [
          'C4',
          () =>
            client.console.deleteConsolePalAccess({ palId: 'leave-request', ssoId: bGrantedSso }),
        ],
        ['E2', () => client.enterprise.deleteSso({ sso: bSso })],
        ['E5', () => client.enterprise.getSsoStatus({ sso: bSso })],
        [
          'E6',
          () =>
            client.enterprise.updateSso({
              sso: bSso,
              firstName: 'A',
              lastName: 'B',
              email: 'c@acme.test',
            }),
        ],
      ];
      for (const [what, call] of calls) {
        const error = (await call().then(
          () => undefined,
          (e: unknown) => e,
        )) as { status?: number; code?: string } | undefined;
        expect(error, what).toBeDefined();
        expect([error!.status, error!.code], what).toEqual([404, 'NOT_FOUND']);
      }
    }
    expect(await h.b.json.enterprise.getSsoStatus({ sso: bSso })).toBe('ACTIVE');
    expect(
      (await h.b.json.transactions.searchTransactions({ sso: bSso })).map((t) => t.id),
    ).toEqual([bTx]);
  });

  it('never appear in the first enterprise’s searches', async () => {
    const pals = await h.a.json.pals.searchPals({ includeTest: true, includeInstalled: true });
    expect(pals.map((p) => p.id)).not.toContain(bPal);
    expect(pals.map((p) => p.id).sort()).toEqual(h.a.pals.map((m) => m.id).sort());
    expect(
      (await h.a.json.console.listConsolePals({ includeTest: true, includeInstalled: true })).map(
        (p) => p.id,
      ),
    ).not.toContain(bPal);
    expect(await h.a.json.pals.searchPals({ name: 'globex' })).toEqual([]);
    const txs = await h.a.json.transactions.searchTransactions({ includeTest: true });
    expect(txs.map((t) => t.id)).toEqual([aTx]);
    expect(await h.a.json.transactions.searchTransactions({ palId: bPal })).toEqual([]);
    expect(await h.a.json.transactions.searchTransactions({ sso: bSso })).toEqual([]);
    expect(await h.a.json.transactions.searchTransactions({ name: 'globex' })).toEqual([]);
    // And the other way round.
    expect(
      (await h.b.json.transactions.searchTransactions({ includeTest: true })).map((t) => t.id),
    ).toEqual([bTx]);
    expect(
      (await h.b.json.pals.searchPals({ includeTest: true, includeInstalled: true }))
        .map((p) => p.id)
        .sort(),
    ).toEqual(h.b.pals.map((m) => m.id).sort());
  });

  it('a pal id both enterprises use is each enterprise’s own pal, and T1 creates from the caller’s', async () => {
    const own = await h.a.json.pals.getPal({ id: 'expense-approval' });
    const theirs = await h.b.json.pals.getPal({ id: 'expense-approval' });
    expect(own.name).toBe('Expense Approval');
    expect(theirs.name).toBe('Globex Expense Approval');
    const tx = await h.b.json.transactions.createTransaction({ palId: 'expense-approval' });
    expect((await h.b.json.transactions.getTransaction({ id: tx })).name).toBe(
      'Globex Expense Approval',
    );
    expectError(await h.http(`${ROOT}/transactions/${tx}`), 404, 'NOT_FOUND');
  });

  it('accounts are global: the first enterprise may ask about and invite a person Globex registered, but not reuse the address', async () => {
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'gus@globex.test' })).toBe(true);
    const invited = await h.a.json.enterprise.inviteSso({ email: 'gus@globex.test' });
    expect(invited).not.toBe(bGrantedSso);
    expect(await h.a.json.enterprise.getSsoStatus({ sso: invited })).toBe('PENDING_ACTIVATION');
    expect(await h.b.json.enterprise.getSsoStatus({ sso: bGrantedSso })).toBe('ACTIVE');
    // Globex cannot see Acme's SSO for the same person.
    expectError(
      await h.http(`${ROOT}/enterprises/sso/status?sso=${invited}`, { auth: h.b }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await h.http(`${ROOT}/enterprises/sso`, {
        body: form({ firstName: 'G', lastName: 'G', email: 'GUS@globex.test' }),
      }),
      409,
      'CONFLICT',
    );
  });
});

describe('E6 on a person another enterprise holds an SSO of', () => {
  const update = (sso: string, email: string, auth = h.a) =>
    h.http(`${ROOT}/enterprises/sso/update`, {
      auth,
      accept: 'application/json',
      body: form({ sso, firstName: 'Taken', lastName: 'Over', email }),
    });

  it('answers 409 and changes nothing: the first enterprise cannot take over Globex’s person', async () => {
    const victim = await h.b.json.enterprise.createSso({
      firstName: 'Vera',
      lastName: 'Victim',
      email: 'vera@globex.test',
    });
    // Acme looks the person up (E4), invites them (E3: its own PENDING_ACTIVATION SSO on the
    // global account), then rewrites the account through that SSO (E6).
    expect(await h.a.json.enterprise.isEmailRegistered({ email: 'vera@globex.test' })).toBe(true);
    const foothold = await h.a.json.enterprise.inviteSso({ email: 'vera@globex.test' });
    const answer = await update(foothold, 'thief@acme.test');
    const [message] = expectError(answer, 409, 'CONFLICT', 'json');
    expect(message).toContain('another enterprise');
    // Globex's person is untouched: the address, the names, the status.
    expect(await getSso(h.domain, h.b.enterpriseId, victim)).toMatchObject({
      email: 'vera@globex.test',
      firstName: 'Vera',
      lastName: 'Victim',
      status: 'ACTIVE',
    });
    expect(await h.b.json.enterprise.isEmailRegistered({ email: 'thief@acme.test' })).toBe(false);
    // A change of names alone is a rewrite of the shared identity too.
    expectError(await update(foothold, 'vera@globex.test'), 409, 'CONFLICT', 'json');
    // Nor may Globex rewrite it while Acme holds an SSO of it (pending counts: an invitee may
    // still accept, and would then be mailed at the new address).
    expectError(await update(victim, 'vera.new@globex.test', h.b), 409, 'CONFLICT', 'json');
    expect((await getSso(h.domain, h.b.enterpriseId, victim)).email).toBe('vera@globex.test');
  });

  it('a DELETED SSO of another enterprise does not count; an own SSO never does', async () => {
    const person = await h.b.json.enterprise.createSso({
      firstName: 'Dora',
      lastName: 'Deleted',
      email: 'dora@globex.test',
    });
    const invited = await h.a.json.enterprise.inviteSso({ email: 'dora@globex.test' });
    expectError(await update(person, 'dora.new@globex.test', h.b), 409, 'CONFLICT', 'json');
    expect(await h.a.json.enterprise.deleteSso({ sso: invited })).toBe(true);
    const answer = await update(person, 'dora.new@globex.test', h.b);
    expect(answer.status, answer.text).toBe(200);
    expect((await getSso(h.domain, h.b.enterpriseId, person)).email).toBe('dora.new@globex.test');
  });

  it('E6 racing another enterprise’s E3 of the same person: never both (on two nodes with PostgreSQL)', async () => {
    // With PostgreSQL the invitations go through a second node on the same database.
    const other =
      engine === 'postgres' ? await startServer(h.config, { logger: false }) : undefined;
    try {
      const inviteUrl = `${other?.url ?? h.url}${ROOT}/enterprises/sso/invite`;
      for (let round = 0; round < 12; round++) {
        const email = `race-${round}@globex.test`;
        const sso = await h.b.json.enterprise.createSso({ firstName: 'R', lastName: 'Ace', email });
        const [updated, invited] = await Promise.all([
          update(sso, `moved-${round}@globex.test`, h.b),
          fetch(inviteUrl, {
            method: 'POST',
            headers: { Authorization: h.a.authorization, Accept: 'application/json' },
            body: form({ email }),
          }).then(async (r) => ({ status: r.status, text: await r.text() })),
        ]);
        const outcome = `${updated.status} ${invited.status}`;
        // Either E6 went first (then E3 finds no account with the old address: 404), or E3 did
        // (then Acme holds an SSO of the account and E6 is refused: 409).
        expect(['200 404', '409 200'], `round ${round}: ${updated.text} ${invited.text}`).toContain(
          outcome,
        );
        const account = await getSso(h.domain, h.b.enterpriseId, sso);
        expect(account.email).toBe(outcome === '200 404' ? `moved-${round}@globex.test` : email);
      }
    } finally {
      await other?.close();
    }
  });
});

function sameHeaders(x: Answer, y: Answer): boolean {
  const keep = (a: Answer) => [
    a.type,
    a.headers.get('www-authenticate'),
    a.headers.get('x-total-count'),
  ];
  return JSON.stringify(keep(x)) === JSON.stringify(keep(y));
}
