// The audit log over real HTTP and real SMTP (docs/events.md): each act of the
// list that exists today writes exactly one record of its action, naming who (the API client,
// the person's SSO), what, the target, the outcome, the address and the request id; a
// rolled-back act writes none; wrong secrets are recorded only for existing clients and only
// while the throttle answers 401. Finally the whole table is searched for every secret the test
// made or saw (client secrets, wrong secrets, entry tokens, invitation tokens, mail-link values,
// session cookies, Authorization headers): none may be in it.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, rotateClientSecret, upsertClientWithSecret } from '../src/domain/clients.js';
import { deployPal } from '../src/domain/pals.js';
import { SESSION_IDLE_MS, sweepSessions } from '../src/domain/sessions.js';
import {
  addWebhookEndpoint,
  removeEndpoint,
  rotateEndpointSecret,
} from '../src/domain/webhooks.js';
import type { AuditRow } from '../src/storage/audit-log.js';
import { basic, form, PUBLIC_URL, startHarness, type Answer, type Harness } from './harness.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const TOKEN = /[A-Za-z0-9_-]{43}/;

let h: Harness;
/** Every secret this test made or saw; none may be in the audit log. */
const secrets: string[] = [];
const keep = (...values: string[]) => {
  for (const value of values) {
    expect(value.length).toBeGreaterThanOrEqual(20);
    secrets.push(value);
  }
};

beforeAll(async () => {
  // Webhook endpoints on loopback (the test's own address) are allowed here.
  h = await startHarness({ smtp: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  for (const id of ['wf-console', 'wf-tx'])
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, id));
  keep(h.a.password, h.b.password, h.a.authorization.slice(6), h.b.authorization.slice(6));
});
afterAll(() => h?.close());

async function rows(): Promise<AuditRow[]> {
  return h.domain.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
}

async function lastId(): Promise<number> {
  const all = await rows();
  return all.length ? Number(all.at(-1)!.id) : 0;
}

/**
 * Runs `act` and answers the records it wrote. Wrong secrets are recorded after their 401 has
 * gone out: `settle` waits until the log holds that many more records of the action.
 */
async function recordsOf<T>(
  act: () => Promise<T>,
  settle?: { action: string; count: number },
): Promise<{ value: T; written: AuditRow[] }> {
  const before = await lastId();
  const value = await act();
  const since = async () => (await rows()).filter((r) => Number(r.id) > before);
  let written = await since();
  for (let i = 0; settle && i < 100; i++) {
    if (written.filter((r) => r.action === settle.action).length >= settle.count) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
    written = await since();
  }
  return { value, written };
}

/** The one record of `action` among `written` (and that there is exactly one). */
function one(written: AuditRow[], action: string): AuditRow & { facts: Record<string, unknown> } {
  const found = written.filter((r) => r.action === action);
  expect(found, `${action} in ${JSON.stringify(written.map((r) => r.action))}`).toHaveLength(1);
  const row = found[0]!;
  return { ...row, facts: row.details === null ? {} : JSON.parse(row.details) };
}

/** A browser's request to a page: no credentials, no redirects followed. */
async function browse(path: string, method = 'GET', cookie?: string): Promise<Answer> {
  const response = await fetch(h.url + path, {
    method,
    redirect: 'manual',
    headers: {
      ...(cookie ? { Cookie: cookie } : {}),
      ...(method === 'POST' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: method === 'POST' ? '' : undefined,
  });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    headers: response.headers,
    text: await response.text(),
  };
}

/** Enters with a token; the session cookie (kept as a secret). */
async function enter(token: string): Promise<{ cookie: string; entered: Answer }> {
  const entered = await browse(`/services/enter/${token}`);
  expect(entered.status, entered.text).toBe(303);
  const cookie = entered.headers.get('set-cookie')!.split(';')[0]!;
  keep(cookie.split('=')[1]!);
  return { cookie, entered };
}

let sso: string;

describe('the audit log records each act once', () => {
  it('auth.failed: a wrong secret of an existing client, with address and request id', async () => {
    const wrong = 'W'.repeat(43);
    keep(wrong, basic(h.a.username, wrong).slice(6));
    const { value: answer, written } = await recordsOf(
      () => h.http('/services/rest/pals', { auth: basic(h.a.username, wrong) }),
      { action: 'auth.failed', count: 1 },
    );
    expect(answer.status).toBe(401);
    const record = one(written, 'auth.failed');
    expect(record).toMatchObject({
      enterprise_id: h.a.enterpriseId,
      outcome: 'failure',
      actor_type: 'client',
      actor: h.a.username,
      target_type: 'client',
      target: h.a.username,
      ip: '127.0.0.1',
      request_id: answer.headers.get('x-request-id'),
    });
    expect(written).toHaveLength(1);
  });

  it('auth.failed: none for a username no client has; none once the throttle answers 429', async () => {
    const stranger = await recordsOf(
      () => h.http('/services/rest/pals', { auth: basic('nobody-at-all', 'x'.repeat(43)) }),
      { action: 'auth.failed', count: 1 }, // waits its 2 s out: there is none to wait for
    );
    expect(stranger.value.status).toBe(401);
    expect(stranger.written).toEqual([]);

    const client = await createClient(h.domain, h.b.enterpriseId);
    keep(client.password);
    const attempts = await recordsOf(
      async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 14; i++)
          statuses.push(
            (await h.http('/services/rest/pals', { auth: basic(client.username, `wrong-${i}`) }))
              .status,
          );
        return statuses;
      },
      { action: 'auth.failed', count: 10 },
    );
    // The throttle lets 10 wrong attempts through (401), then answers 429; only the 401s count.
    expect(attempts.value).toEqual([...Array(10).fill(401), ...Array(4).fill(429)]);
    const failed = attempts.written.filter((r) => r.action === 'auth.failed');
    expect(failed).toHaveLength(10);
    expect(new Set(failed.map((r) => r.enterprise_id))).toEqual(new Set([h.b.enterpriseId]));
  });

  it('sso.created (E1), and none when E1 is refused (the act rolled back)', async () => {
    const { value: answer, written } = await recordsOf(() =>
      h.http('/services/rest/enterprises/sso', {
        accept: 'application/json',
        body: form({ firstName: 'Audrey', lastName: 'Audit', email: 'audrey@example.test' }),
      }),
    );
    sso = JSON.parse(answer.text) as string;
    expect(one(written, 'sso.created')).toMatchObject({
      enterprise_id: h.a.enterpriseId,
      actor_type: 'client',
      actor: h.a.username,
      target_type: 'sso',
      target: sso,
      request_id: answer.headers.get('x-request-id'),
    });
    const refused = await recordsOf(() =>
      h.http('/services/rest/enterprises/sso', {
        body: form({ firstName: 'A', lastName: 'B', email: 'AUDREY@example.test' }),
      }),
    );
    expect(refused.value.status).toBe(409);
    expect(refused.written).toEqual([]);
  });

  it('sso.updated (E6)', async () => {
    const { written } = await recordsOf(() =>
      h.a.json.enterprise.updateSso({
        sso,
        firstName: 'Audrey',
        lastName: 'Audited',
        email: 'audrey@example.test',
      }),
    );
    expect(one(written, 'sso.updated')).toMatchObject({ target: sso, actor: h.a.username });
  });

  it('sso.invited (E3) and sso.activated (the invitation link), by the person', async () => {
    const email = 'ivo@people.example.test';
    await h.b.json.enterprise.createSso({ firstName: 'Ivo', lastName: 'Invitee', email });
    const mailsBefore = h.mails.length;
    const invited = await recordsOf(() => h.a.json.enterprise.inviteSso({ email }));
    expect(one(invited.written, 'sso.invited')).toMatchObject({
      enterprise_id: h.a.enterpriseId,
      target: invited.value,
      actor: h.a.username,
    });
    const text = h.mails[mailsBefore]!.mail.text!;
    const token = new RegExp(`/services/invitations/(${TOKEN.source})`).exec(text)![1]!;
    keep(token);
    const confirm = await recordsOf(() => browse(`/services/invitations/${token}`));
    expect(confirm.written).toEqual([]); // the GET changes nothing
    const accepted = await recordsOf(() => browse(`/services/invitations/${token}`, 'POST'));
    expect(accepted.value.status).toBe(303); // to the accepted page
    expect(one(accepted.written, 'sso.activated')).toMatchObject({
      enterprise_id: h.a.enterpriseId,
      actor_type: 'sso',
      actor: invited.value,
      target: invited.value,
      ip: '127.0.0.1',
    });
  });

  it('grant.given (C3) and grant.removed (C4); no record when C3 gives nothing new or C4 removes nothing', async () => {
    const grant = { palId: 'wf-console', ssoId: sso, useEnterpriseProfile: true };
    const given = await recordsOf(() => h.a.json.console.grantConsolePalAccess(grant));
    expect(one(given.written, 'grant.given')).toMatchObject({ target: sso });
    expect(one(given.written, 'grant.given').facts).toEqual({
      palId: 'wf-console',
      profile: 'enterprise',
    });
    // Given again: still true, and no second "given" in the trail.
    const again = await recordsOf(() => h.a.json.console.grantConsolePalAccess(grant));
    expect(again.value).toBe(true);
    expect(again.written).toEqual([]);
    const removed = await recordsOf(() =>
      h.a.json.console.deleteConsolePalAccess({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: true,
      }),
    );
    expect(one(removed.written, 'grant.removed')).toMatchObject({ target: sso });
    const nothing = await recordsOf(() =>
      h.a.json.console.deleteConsolePalAccess({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: true,
      }),
    );
    expect(nothing.value).toBe(false);
    expect(nothing.written).toEqual([]);
    // Access again, for the console entry below.
    await h.a.json.console.grantConsolePalAccess({
      palId: 'wf-console',
      ssoId: sso,
      useEnterpriseProfile: true,
    });
  });

  it('token.issued (C6), token.redeemed and session.started (the entry), token.refused (again)', async () => {
    const issued = await recordsOf(() =>
      h.a.json.console.createConsoleToken({
        palId: 'wf-console',
        ssoId: sso,
        useEnterpriseProfile: true,
        action: 'hello',
      }),
    );
    const token = issued.value;
    keep(token);
    const record = one(issued.written, 'token.issued');
    expect(record).toMatchObject({ actor: h.a.username, target_type: 'pal', target: 'wf-console' });
    expect(record.facts).toMatchObject({ kind: 'console', sso, tokenRef: expect.any(String) });
    const tokenRef = record.facts.tokenRef as string;
    expect(tokenRef).toHaveLength(12);

    const entry = await recordsOf(() => enter(token));
    expect(one(entry.written, 'token.redeemed')).toMatchObject({
      actor_type: 'sso',
      actor: sso,
      ip: '127.0.0.1',
      request_id: entry.value.entered.headers.get('x-request-id'),
    });
    expect(one(entry.written, 'token.redeemed').facts.tokenRef).toBe(tokenRef);
    expect(one(entry.written, 'session.started')).toMatchObject({
      actor: sso,
      target: 'wf-console',
    });

    const again = await recordsOf(() => browse(`/services/enter/${token}`));
    expect(again.value.status).toBe(410);
    const refused = one(again.written, 'token.refused');
    expect(refused).toMatchObject({ outcome: 'failure', actor_type: 'anonymous' });
    expect(refused.facts).toMatchObject({ tokenRef, reason: 'used', kind: 'console' });
    // A made-up token is no record: anyone can make those up.
    const madeUp = await recordsOf(() => browse(`/services/enter/${'m'.repeat(43)}`));
    expect(madeUp.value.status).toBe(410);
    expect(madeUp.written).toEqual([]);
  });

  it('token.issued for T5, T8 and P3; entering with T5 gives token.redeemed and session.started', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const t5 = await recordsOf(() =>
      h.a.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso }),
    );
    expect(one(t5.written, 'token.issued')).toMatchObject({
      target_type: 'transaction',
      target: tx,
    });
    expect(one(t5.written, 'token.issued').facts).toMatchObject({ kind: 'participant' });
    keep(t5.value);
    const t8 = await recordsOf(() =>
      h.a.json.transactions.createAnonymousToken({ transactionId: tx, userSSO: sso }),
    );
    expect(one(t8.written, 'token.issued').facts).toMatchObject({ kind: 'anonymous' });
    keep(t8.value);
    const p3 = await recordsOf(() =>
      h.a.json.pals.createPalToken({ palId: 'wf-tx', userSSO: sso }),
    );
    expect(one(p3.written, 'token.issued').facts).toMatchObject({ kind: 'new-transaction' });
    expect(p3.value.startsWith(`${PUBLIC_URL}/services/enter/`)).toBe(true);
    keep(p3.value.slice(p3.value.lastIndexOf('/') + 1));

    const entry = await recordsOf(() => enter(t5.value));
    expect(one(entry.written, 'token.redeemed').facts).toMatchObject({ kind: 'participant' });
    expect(one(entry.written, 'session.started').facts).toMatchObject({ role: 'participant' });
  });

  it('roles.removed: T7 on one transaction, T4 on all of them, with the number removed', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const { cookie, entered } = await enter(
      await h.a.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso }),
    );
    const t7 = await recordsOf(() =>
      h.a.json.transactions.removeTransactionRole({ transactionId: tx, userSSO: sso }),
    );
    expect(t7.value).toBe(1);
    expect(one(t7.written, 'roles.removed')).toMatchObject({ target: sso, actor: h.a.username });
    expect(one(t7.written, 'roles.removed').facts).toEqual({
      transactionId: tx,
      removed: 1,
      tokensWithdrawn: 0,
    });
    // The session that role gave ends at its next request: session.ended, withdrawn.
    const next = await recordsOf(() => browse(entered.headers.get('location')!, 'GET', cookie));
    expect(next.value.status).toBe(403);
    const ended = one(next.written, 'session.ended');
    expect(ended).toMatchObject({ target: tx, actor_type: 'system' });
    expect(ended.facts).toMatchObject({ sso, reason: 'withdrawn' });
    // Unused T5 and T8 tokens would give a role again: T4 withdraws them (this one, and those
    // earlier tests left), and counts them.
    await h.a.json.transactions.createTransactionToken({ transactionId: tx, userSSO: sso });
    const unused = () =>
      h.domain.db
        .selectFrom('tokens')
        .select('token_hash')
        .where('sso_id', '=', sso)
        .where('kind', 'in', ['participant', 'anonymous'])
        .where('used_at', 'is', null)
        .execute();
    const before = (await unused()).length;
    expect(before).toBeGreaterThan(0);
    const t4 = await recordsOf(() => h.a.json.transactions.removeAllRoles({ userSSO: sso }));
    expect(one(t4.written, 'roles.removed').facts).toEqual({
      transactionId: null,
      removed: t4.value,
      tokensWithdrawn: before,
    });
    expect(await unused()).toEqual([]);
  });

  it('session.started by a mailed link; its values are secrets too', async () => {
    const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const before = h.mails.length;
    await h.a.json.transactions.runTransactionWorkflow({
      transactionId: tx,
      transactionContent: {
        postData: [
          { name: 'step', value: 'submit' },
          { name: 'approver', value: sso },
          { name: 'amount', value: '5' },
        ],
      },
    });
    const text = h.mails[before]!.mail.text!;
    const link = new URL(/http:\/\/\S+\/services\/mail\?\S+/.exec(text)![0]);
    keep(link.searchParams.get('encryptedToken')!, link.searchParams.get('encryptedAction')!);
    const path = `${link.pathname}${link.search}`;
    const confirm = await recordsOf(() => browse(path));
    expect(confirm.written).toEqual([]); // what a mail scanner opens changes nothing
    const entered = await recordsOf(() => browse(path, 'POST'));
    expect(entered.value.status).toBe(303);
    keep(entered.value.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!);
    expect(one(entered.written, 'session.started')).toMatchObject({ actor: sso, target: tx });
  });

  it('session.ended when sessions end (the sweep), one per session', async () => {
    const later = new Date(Date.now() + SESSION_IDLE_MS + 60_000);
    const { value: ended, written } = await recordsOf(() =>
      sweepSessions({ ...h.domain, now: () => later }),
    );
    expect(ended).toBeGreaterThanOrEqual(3);
    expect(written.filter((r) => r.action === 'session.ended')).toHaveLength(ended);
    expect(written.every((r) => r.action === 'session.ended' && r.actor_type === 'system')).toBe(
      true,
    );
  });

  it('sso.deleted (E2)', async () => {
    const { written } = await recordsOf(() => h.a.json.enterprise.deleteSso({ sso }));
    expect(one(written, 'sso.deleted')).toMatchObject({ target: sso, actor: h.a.username });
  });

  it('pal.deployed and client.created (here by the system; the CLI names the operator)', async () => {
    const deployed = await recordsOf(() =>
      deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-empty')),
    );
    expect(one(deployed.written, 'pal.deployed')).toMatchObject({
      target: 'wf-empty',
      actor_type: 'system',
    });
    const created = await recordsOf(() => createClient(h.domain, h.a.enterpriseId));
    keep(created.value.password);
    expect(one(created.written, 'client.created')).toMatchObject({
      target: created.value.username,
    });
  });

  it('client.created for a client given its secret (the demo set-up), secret_rotated when it changes, nothing when it does not', async () => {
    const created = await recordsOf(() =>
      upsertClientWithSecret(h.domain, h.a.enterpriseId, 'derived', 'first-secret'),
    );
    expect(one(created.written, 'client.created')).toMatchObject({ target: 'derived' });
    const same = await recordsOf(() =>
      upsertClientWithSecret(h.domain, h.a.enterpriseId, 'derived', 'first-secret'),
    );
    expect(same.written).toEqual([]);
    const changed = await recordsOf(() =>
      upsertClientWithSecret(h.domain, h.a.enterpriseId, 'derived', 'second-secret'),
    );
    expect(one(changed.written, 'client.secret_rotated')).toMatchObject({ target: 'derived' });
  });
});

describe('the acts of the CLI', () => {
  it('client.secret_rotated (pal client rotate)', async () => {
    const client = await createClient(h.domain, h.b.enterpriseId);
    keep(client.password);
    const rotated = await recordsOf(() =>
      rotateClientSecret(h.domain, h.b.enterpriseId, client.username),
    );
    keep(rotated.value.password);
    expect(one(rotated.written, 'client.secret_rotated')).toMatchObject({
      enterprise_id: h.b.enterpriseId,
      target_type: 'client',
      target: client.username,
    });
  });

  it('webhook.added, webhook.secret_rotated, webhook.removed: the host, never the secret or URL', async () => {
    // A URL that carries a token of its own, as some receivers' URLs do.
    const pathToken = `hook-${'t'.repeat(40)}`;
    keep(pathToken);
    const added = await recordsOf(() =>
      addWebhookEndpoint(h.domain, h.a.enterpriseId, {
        url: `http://127.0.0.1:9/${pathToken}`,
        events: ['sso.created'],
      }),
    );
    keep(added.value.secret);
    const record = one(added.written, 'webhook.added');
    expect(record).toMatchObject({ target_type: 'webhook', target: added.value.id });
    expect(record.facts).toEqual({ host: '127.0.0.1:9', events: 'sso.created' });
    const rotated = await recordsOf(() => rotateEndpointSecret(h.domain, added.value.id));
    keep(rotated.value.secret);
    expect(one(rotated.written, 'webhook.secret_rotated')).toMatchObject({
      enterprise_id: h.a.enterpriseId,
      target: added.value.id,
    });
    const removed = await recordsOf(() => removeEndpoint(h.domain, added.value.id));
    expect(one(removed.written, 'webhook.removed').facts).toEqual({ host: '127.0.0.1:9' });
  });
});

describe('no secret in the audit log', () => {
  it('holds none of the secrets the tests above made or saw, nor anything shaped like one', async () => {
    const all = await rows();
    expect(all.length).toBeGreaterThan(30);
    const dump = JSON.stringify(all);
    expect(secrets.length).toBeGreaterThanOrEqual(15);
    for (const secret of secrets) expect(dump.includes(secret), secret).toBe(false);
    // Tokens, secrets and cookies are 43 base64url characters; nothing in a record is that long.
    expect(dump).not.toMatch(/[A-Za-z0-9_-]{43}/);
  });
});
