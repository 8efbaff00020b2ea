// The session page's form (docs/entry.md, "The session form") over real HTTP, posted exactly as a
// browser posts it (urlencoded and multipart): only the actions the manifest offers to the person
// now run; another role's action, signature or field is refused or ignored; a drawn signature must
// be a real PNG within SIGNATURE_MAX_KB; a missing required signature runs nothing and keeps the
// draft; values and signatures are kept only when the run succeeds, with an audit record and a
// document.signed event per signature; pal.documents.list() and setField from a workflow.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { greyPng } from '@pal-workflow/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailLink } from '../src/domain/mail-links.js';
import { ManifestError } from '../src/domain/pal-manifest.js';
import { deployPal } from '../src/domain/pals.js';
import { loadSessionView } from '../src/domain/session-view.js';
import { readSession } from '../src/domain/sessions.js';
import { createSso } from '../src/domain/ssos.js';
import { addWebhookEndpoint } from '../src/domain/webhooks.js';
import { readVariables, transactionScope } from '../src/storage/variables.js';
import { png } from './documents.js';
import { startHarness, type Answer, type Harness } from './harness.js';
import { tempDir } from './helpers.js';
import { csrfOf, sessionBrowser, sessionPathOf, type SessionBrowser } from './session-pages.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const FILE = 'documents/note.png';

let h: Harness;
let pages: SessionBrowser;
beforeAll(async () => {
  h = await startHarness({
    settleOutbox: false,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', UPLOAD_MAX_MB: '1' },
  });
  pages = sessionBrowser(h.url);
  await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, 'wf-tx'));
  await addWebhookEndpoint(h.domain, h.a.enterpriseId, {
    url: 'http://127.0.0.1:9/hook',
    events: ['document.signed', 'document.signature_cleared'],
  });
});
afterAll(() => h?.close());

let people = 0;
async function person(): Promise<{ sso: string; email: string; name: string }> {
  const email = `fay-${++people}@forms.test`;
  const sso = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Fay',
    lastName: `Form-${people}`,
    email,
  });
  // A known person signs by name with their own (the page's "Sign as" box).
  return { sso, email, name: `Fay Form-${people}` };
}

/** A new wf-tx transaction and a T5 (participant) session on it. */
async function participant() {
  const who = await person();
  const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
  const token = await h.a.json.transactions.createTransactionToken({
    transactionId: tx,
    userSSO: who.sso,
  });
  const { cookie, page } = await pages.enter(token);
  return { ...who, tx, cookie, csrf: csrfOf(page), page };
}

/**
 * An approver's session: the workflow's submit step makes the transaction SUBMITTED and gives the
 * SSO the role `approver`; the SSO enters with a mailed link whose action does nothing.
 */
async function approver() {
  const who = await person();
  const tx = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
  await h.a.json.transactions.runTransactionWorkflow({
    transactionId: tx,
    transactionContent: {
      postData: [
        { name: 'step', value: 'submit' },
        { name: 'approver', value: who.sso },
        { name: 'amount', value: '7' },
      ],
    },
  });

  const link = new URL(
    createMailLink(
      h.domain.config,
      {
        enterpriseId: h.a.enterpriseId,
        transactionId: tx,
        recipientSso: who.sso,
        action: 'nothing',
      },
      new Date(),
    ),
  );
  const entered = await pages.post(undefined, {}, {}, link.pathname + link.search);
  expect(entered.status, entered.text).toBe(303);
  const cookie = entered.headers.get('set-cookie')!.split(';')[0]!;
  const page = await pages.page(cookie);
  expect(page.text).toContain('<dd id="your-role">Approver</dd>');
  return { ...who, tx, cookie, csrf: csrfOf(page), page };
}

/** The session page's data for the session of `cookie`. */
const viewOf = async (cookie: string) => {
  const read = await readSession(h.domain, cookie.slice(cookie.indexOf('=') + 1));
  if (read.state !== 'live') throw new Error('expected a live session');
  return loadSessionView(h.domain, read.session);
};
const varsOf = async (tx: string) =>
  (await readVariables(h.domain.db, transactionScope(tx))).values;
const valuesOf = async (tx: string) =>
  Object.fromEntries(
    (
      await h.domain.db
        .selectFrom('transaction_field_values')
        .select(['field_id', 'value'])
        .where('transaction_id', '=', tx)
        .execute()
    ).map((r) => [r.field_id, r.value]),
  );
const signaturesOf = (tx: string) =>
  h.domain.db
    .selectFrom('transaction_signatures')
    .selectAll()
    .where('transaction_id', '=', tx)
    .orderBy('signature_id')
    .execute();
const statusOf = async (tx: string) =>
  (await h.a.json.transactions.getTransaction({ id: tx })).status;
const dataUrl = (bytes: Uint8Array) =>
  `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`;

function expectRefused(answer: Answer, status: number, text: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.type).toBe('text/html; charset=utf-8');
  expect(answer.text).toContain(text);
}

/**
 * A form stopped before its run: 303 back to its page, which says `text` (escaped as the page
 * has it) and holds what was typed. Returns the page.
 */
async function expectBack(answer: Answer, cookie: string, text: string): Promise<string> {
  expect(answer.status, answer.text).toBe(303);
  expect(answer.headers.get('location')).toBe(sessionPathOf(cookie));
  const page = (await pages.page(cookie)).text;
  expect(page).toContain(text);
  return page;
}

/** A PNG of random grey pixels: it does not compress, so its size is about width × height. */
function noisePng(width: number, height: number): Buffer {
  return greyPng(width, height, (x, y) => ((y * (width + 1) + 1 + x) * 7919) % 251, 0);
}

describe('the actions offered', () => {
  it('shows one button per action offered to the person now, and nothing else', async () => {
    const p = await participant();
    for (const name of ['note', 'runWorkflow', 'refuse', 'decline', 'fill'])
      expect(p.page.text).toContain(`name="action" value="${name}"`);
    expect(p.page.text).not.toContain('value="approve"');
    const a = await approver();
    expect(a.page.text).toContain('value="approve"');
    expect(a.page.text).toContain('value="note"');
    expect(a.page.text).not.toContain('value="runWorkflow"');
  });

  it('a posted action not offered to the person now is a 403 page, and nothing runs', async () => {
    const p = await participant();
    const count = (await varsOf(p.tx)).count;
    // Another role's action, exports that exist but are no action, and no action at all.
    for (const action of ['approve', 'run', 'enter', 'runWorkflow ', '', 'constructor'])
      expectRefused(
        await pages.post(p.cookie, { csrf: p.csrf, action, text: 'x' }),
        403,
        'This action is not offered to you now',
      );
    expectRefused(
      await pages.postMultipart(p.cookie, { csrf: p.csrf, action: 'approve' }),
      403,
      'not offered',
    );
    expect(await statusOf(p.tx)).toBe('NEW');
    expect((await varsOf(p.tx)).count).toBe(count);
    expect(await valuesOf(p.tx)).toEqual({});
  });

  it('a CSRF token of as many characters but other bytes, or none, is refused, never a 500', async () => {
    const p = await participant();
    // Other bytes; without a token, or an empty one, as from no page of the service.
    for (const fields of [{ csrf: 'é'.repeat(p.csrf.length) }, {}, { csrf: '' }] as Record<
      string,
      string
    >[])
      expectRefused(
        await pages.post(p.cookie, { ...fields, action: 'note', text: 'x' }),
        403,
        // A link (GET) to the page, never "reload", which posts the refused form again.
        `<p><a href="${sessionPathOf(p.cookie)}">Open the page again</a></p>`,
      );
    expect(await valuesOf(p.tx)).toEqual({});
  });

  it('two links opened in one browser: each page posts for its own transaction only', async () => {
    const first = await participant();
    const second = await participant();
    // One browser: it sends both sessions' cookies with every request.
    const both = `${first.cookie}; ${second.cookie}`;
    const post = (to: string, csrf: string, text: string) =>
      pages.post(both, { csrf, action: 'note', text }, {}, sessionPathOf(to));
    // The earlier page's form, after the later link was opened, goes to its own transaction.
    expect((await post(first.cookie, first.csrf, 'for the first')).status).toBe(303);
    expect((await post(second.cookie, second.csrf, 'for the second')).status).toBe(303);
    expect((await varsOf(first.tx)).note).toBe('for the first');
    expect((await varsOf(second.tx)).note).toBe('for the second');
    // A page's token posted to the other page's address is not that session's: refused.
    expectRefused(await post(second.cookie, first.csrf, 'crossed'), 403, 'This form was refused');
    expect((await varsOf(second.tx)).note).toBe('for the second');
    // Each address shows its own transaction, whichever was opened last.
    for (const { cookie, tx } of [first, second]) {
      const page = await pages.open(sessionPathOf(cookie), both);
      expect(page.status).toBe(200);
      expect(page.text).toContain(`noted for the ${tx === first.tx ? 'first' : 'second'}`);
    }
  });

  it('a form whose turn comes after the transaction completed keeps nothing of it', async () => {
    const p = await participant();
    let release!: () => void;
    const gate = new Promise<void>((done) => (release = done));
    // A run ahead of the form holds the transaction's line of runs ...
    const ahead = h.domain.engine.transactionRuns.run(p.tx, () => gate);
    const posting = pages.post(p.cookie, { csrf: p.csrf, action: 'note', text: 'too late' });
    await new Promise((done) => setTimeout(done, 500));
    // ... and completes the transaction while the form, judged while it was OPEN, waits.
    await h.domain.db
      .updateTable('transactions')
      .set({ system_status: 'COMPLETED' })
      .where('id', '=', p.tx)
      .execute();
    release();
    await ahead;
    const answer = await posting;
    expect(answer.status).toBe(303);
    expect(await valuesOf(p.tx)).toEqual({});
    const page = await pages.page(p.cookie);
    expect(page.text).toContain('nothing of it was kept');
  });

  it("a forged post of another role's action runs nothing (the approver posts the participant's)", async () => {
    const a = await approver();
    const before = await varsOf(a.tx);
    for (const action of ['refuse', 'runWorkflow'])
      expectRefused(
        await pages.postMultipart(a.cookie, { csrf: a.csrf, action }),
        403,
        'not offered',
      );
    expect(await varsOf(a.tx)).toEqual(before);
    expect(await statusOf(a.tx)).toBe('SUBMITTED');
  });
});

describe('values and signatures', () => {
  it('keeps the values the person may edit and their signature when the run succeeds; ignores the others', async () => {
    const p = await participant();
    expect(
      (
        await pages.post(
          p.cookie,
          {
            csrf: p.csrf,
            action: 'note',
            text: 'hello',
            reviewed: 'on',
            decision: 'yes', // the approver's field
            office: 'Paris', // the owner's field
            'signature.participant-sign': p.name,
          },
          { 'User-Agent': 'FormTest/1.0' },
        )
      ).status,
    ).toBe(303);
    expect((await varsOf(p.tx)).note).toBe('hello');
    expect(await valuesOf(p.tx)).toEqual({ text: 'hello', reviewed: 'true' });
    const [signature, ...more] = await signaturesOf(p.tx);
    expect(more).toEqual([]);
    expect(signature).toMatchObject({
      file: FILE,
      signature_id: 'participant-sign',
      role: 'participant',
      sso_id: p.sso,
      kind: 'TYPED',
      text: p.name,
      image: null,
      signer_name: expect.stringMatching(/^Fay Form-\d+$/),
      signer_email: p.email,
      ip_address: '127.0.0.1',
      user_agent: 'FormTest/1.0',
    });
    expect(Math.abs(Number(signature!.record_time) - Date.now() / 1000)).toBeLessThan(60);

    // The audit log and the outbox hold the signature, in the run's commit.
    const audit = await h.domain.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'document.signed')
      .where('target', '=', p.tx)
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_type: 'sso', actor: p.sso, outcome: 'success' });
    expect(JSON.parse(audit[0]!.details!)).toEqual({
      file: FILE,
      signature: 'participant-sign',
      role: 'participant',
      kind: 'TYPED',
    });
    const events = await h.domain.db
      .selectFrom('outbox_messages')
      .select('payload')
      .where('event_type', '=', 'document.signed')
      .execute();
    const event = events
      .map((e) => JSON.parse(e.payload))
      .find((e) => e.data.transactionId === p.tx);
    expect(event).toMatchObject({
      type: 'document.signed',
      data: {
        transactionId: p.tx,
        palId: 'wf-tx',
        documentId: FILE,
        signatureId: 'participant-sign',
        sso: p.sso,
      },
    });

    // The page shows the value kept; the signature is given and offered no more.
    const page = await pages.page(p.cookie);
    expect(page.text).toContain('value="hello"');
    expect(page.text).not.toContain('name="signature.participant-sign"');
    // A second signature of the same box (another tab's form) runs nothing; the page says why
    // and keeps what was typed.
    const again = await expectBack(
      await pages.post(p.cookie, {
        csrf: p.csrf,
        action: 'note',
        text: 'again',
        'signature.participant-sign': p.name,
      }),
      p.cookie,
      'was already given',
    );
    expect(again).toContain('value="again"');
    expect((await varsOf(p.tx)).note).toBe('hello');
  });

  it('keeps a drawn signature posted as multipart: the PNG as drawn; an unchecked checkbox is "false"', async () => {
    const p = await participant();
    const drawn = png(300, 100);
    const answer = await pages.postMultipart(p.cookie, {
      csrf: p.csrf,
      action: 'note',
      text: 'multi',
      'signature.participant-sign': dataUrl(drawn),
    });
    expect(answer.status, answer.text).toBe(303);
    expect(await valuesOf(p.tx)).toEqual({ text: 'multi', reviewed: 'false' });
    const [signature] = await signaturesOf(p.tx);
    expect(signature).toMatchObject({ kind: 'DRAWN', text: null });
    expect(Buffer.from(signature!.image!).equals(drawn)).toBe(true);
  });

  it('a failed run keeps nothing, shows its messages and the draft', async () => {
    for (const action of ['refuse', 'decline']) {
      const p = await participant();
      const answer = await pages.post(p.cookie, {
        csrf: p.csrf,
        action,
        text: 'draft <text>',
        'signature.participant-sign': p.name,
      });
      expect(answer.status, answer.text).toBe(303);
      expect(await valuesOf(p.tx)).toEqual({});
      expect(await signaturesOf(p.tx)).toEqual([]);
      expect((await varsOf(p.tx)).refused).toBeUndefined();
      const page = await pages.page(p.cookie);
      expect(page.text).toContain(
        action === 'refuse' ? 'refused with draft &#60;text&#62;' : 'declined draft &#60;text&#62;',
      );
      // The draft refills the form (h18's page also refills the signature).
      expect(page.text).toContain('value="draft &#60;text&#62;"');
      expect(page.text).toContain('name="signature.participant-sign"');
    }
  });

  it("another role's signature, a false PNG, an oversized one: nothing runs, and the page says why with what was typed", async () => {
    const p = await participant();
    const notPng = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
    const prefixOnly = Buffer.concat([png(1, 1).subarray(0, 8), Buffer.from('<svg/>')]);
    const cases: [Record<string, string>, string][] = [
      [{ 'signature.approver-sign': 'Fay Forged' }, 'is for the role approver, not yours'],
      [{ 'signature.participant-sign': dataUrl(notPng) }, 'is not a PNG image'],
      [{ 'signature.participant-sign': dataUrl(prefixOnly) }, 'is a PNG image cut short'],
      [
        { 'signature.participant-sign': 'data:image/svg+xml;base64,PHN2Zy8+' },
        'is not a PNG image',
      ],
      [{ 'signature.participant-sign': dataUrl(noisePng(400, 300)) }, 'larger than 100 KiB'],
      [{ 'signature.nobody': 'Fay' }, 'There is no signature “nobody” here'],
      [{ 'signature.participant-sign': 'Fay\u0000Null' }, 'not part of a name'],
      [{ decision: 'maybe', text: 'x' }, ''], // not the participant's field: ignored, so this runs
    ];
    for (const [n, [fields, message]] of cases.slice(0, -1).entries()) {
      for (const post of [pages.post, pages.postMultipart]) {
        const typed = `kept ${n} ${post === pages.post ? 'u' : 'm'}`;
        const page = await expectBack(
          await post(p.cookie, { csrf: p.csrf, action: 'note', text: typed, ...fields }),
          p.cookie,
          message,
        );
        expect(page).toContain(`value="${typed}"`);
      }
    }
    expect((await varsOf(p.tx)).note).toBeUndefined();
    expect(await valuesOf(p.tx)).toEqual({});
    expect(await signaturesOf(p.tx)).toEqual([]);
  });

  it('a missing required signature runs nothing, says which, and keeps what was typed', async () => {
    const a = await approver();
    const before = await varsOf(a.tx);
    const answer = await pages.post(a.cookie, { csrf: a.csrf, action: 'approve', decision: 'yes' });
    expect(answer.status, answer.text).toBe(303);
    expect(await statusOf(a.tx)).toBe('SUBMITTED');
    expect(await varsOf(a.tx)).toEqual(before);
    expect(await valuesOf(a.tx)).toEqual({});
    const page = await pages.page(a.cookie);
    expect(page.text).toContain('Sign before you go on: your signature is required.');
    expect(page.text).toContain('value="yes"');
    // Signed, it runs.
    expect(
      (
        await pages.post(a.cookie, {
          csrf: a.csrf,
          action: 'approve',
          decision: 'yes',
          'signature.approver-sign': a.name,
        })
      ).status,
    ).toBe(303);
    expect(await statusOf(a.tx)).toBe('APPROVED');
    expect(await valuesOf(a.tx)).toMatchObject({ decision: 'yes' });
    expect((await signaturesOf(a.tx)).map((s) => s.signature_id)).toEqual(['approver-sign']);
  });

  it("a value outside a choice field's picklist runs nothing; the page says so beside the field", async () => {
    const a = await approver();
    const page = await expectBack(
      await pages.post(a.cookie, {
        csrf: a.csrf,
        action: 'note',
        decision: 'maybe',
      }),
      a.cookie,
      '&#34;maybe&#34; is not one of',
    );
    expect(page).toContain('class="field-error" id="error-decision"');
    expect(await valuesOf(a.tx)).toEqual({});
  });
});

describe('the session view (what the page renders)', () => {
  it("holds the person's editable fields, their signatures, the offered actions and the draft", async () => {
    const p = await participant();
    let view = await viewOf(p.cookie);
    expect(view).toMatchObject({
      pal: { id: 'wf-tx', name: 'Workflow transaction test pal' },
      transaction: { id: p.tx, status: 'NEW', systemStatus: 'OPEN' },
      console: false,
      person: { sso: p.sso, name: expect.stringMatching(/^Fay Form-\d+$/), role: 'participant' },
      csrf: p.csrf,
      documentsOpen: true,
      draft: null,
    });
    expect(view.actions.map((a) => a.name)).toEqual([
      'note',
      'runWorkflow',
      'refuse',
      'decline',
      'fill',
    ]);
    const [document] = view.documents;
    expect(document).toMatchObject({
      index: 0,
      file: FILE,
      contentType: 'image/png',
      pages: [{ width: 400, height: 200 }],
    });
    expect(document!.fields.map((f) => [f.field.id, f.value, f.editable])).toEqual([
      ['text', '', true],
      ['reviewed', 'false', true],
      ['decision', '', false],
      ['office', 'Zurich', false],
    ]);
    expect(document!.signatures.map((s) => [s.signature.id, s.mine, s.required, s.given])).toEqual([
      ['participant-sign', true, false, undefined],
      ['approver-sign', false, true, undefined],
    ]);
    expect(view.uploads.map((u) => [u.name, u.editable, u.required, u.accept])).toEqual([
      ['identity', true, false, ['image/png', 'image/jpeg', 'application/pdf']],
      ['proof', false, true, ['application/pdf']],
    ]);

    // A failed run: its messages and the draft (the drawn signature as posted).
    const drawn = dataUrl(png(30, 10));
    await pages.post(p.cookie, {
      csrf: p.csrf,
      action: 'decline',
      text: 'drafted',
      'signature.participant-sign': drawn,
    });
    view = await viewOf(p.cookie);
    expect(view.outcome).toEqual({
      action: 'decline',
      // Its button's label, which the page's heading names it by.
      label: 'Answer no',
      ran: true,
      success: false,
      // Asked for by the page's button, not by an entry.
      pressed: true,
      messages: [{ message: 'declined drafted' }],
    });
    expect(view.draft).toEqual({
      values: { text: 'drafted', reviewed: 'false' },
      signatures: { 'participant-sign': { kind: 'DRAWN', image: drawn } },
    });

    // A run that succeeds: the values kept, the signature given, no draft.
    await pages.post(p.cookie, {
      csrf: p.csrf,
      action: 'note',
      text: 'kept',
      'signature.participant-sign': p.name,
    });
    view = await viewOf(p.cookie);
    expect(view.draft).toBeNull();
    expect(view.documents[0]!.fields[0]!.value).toBe('kept');
    expect(view.documents[0]!.signatures[0]!.given).toEqual({
      kind: 'TYPED',
      text: p.name,
      recordTime: expect.any(Number),
      signerName: view.person.name,
    });
    expect(view.documents[0]!.signatures[0]!.signature.recordTime).toBeGreaterThan(0);
  });
});

describe('the host API: pal.documents', () => {
  it('list() shows the documents with the form laid over them; setField is kept with the run', async () => {
    const p = await participant();
    expect(
      (
        await pages.post(p.cookie, {
          csrf: p.csrf,
          action: 'fill',
          text: 'typed',
          'signature.participant-sign': p.name,
        })
      ).status,
    ).toBe(303);
    const seen = JSON.parse((await varsOf(p.tx)).documents!);
    const [before] = seen.before;
    expect(before).toMatchObject({ filename: FILE, contentType: 'image/png' });
    expect(before.content).toBeUndefined();
    const field = (doc: { fields: { id: string; value?: string }[] }, id: string) =>
      doc.fields.find((f) => f.id === id)?.value;
    expect(field(before, 'text')).toBe('typed');
    expect(field(before, 'office')).toBe('Zurich');
    expect(
      before.signatures.find((s: { id: string }) => s.id === 'participant-sign').recordTime,
    ).toBeGreaterThan(0);
    expect(field(seen.after[0], 'text')).toBe(`filled by ${p.sso}`);
    expect(seen.unknown).toBe(
      'pal.documents.setField: the transaction has no document "documents/none.pdf"',
    );
    expect(seen.badChoice).toBe(
      'pal.documents.setField: "reviewed": a CHECKBOX field\'s value is "true" or "false"',
    );
    expect(seen.signatures).toEqual([
      {
        id: 'participant-sign',
        file: FILE,
        role: 'participant',
        sso: p.sso,
        kind: 'TYPED',
        text: p.name,
        recordTime: expect.any(Number),
      },
    ]);
    // The workflow's value is the last word.
    expect((await valuesOf(p.tx)).text).toBe(`filled by ${p.sso}`);
  });

  it('clearSignature takes a kept signature back, with an audit record; it may be given again', async () => {
    const p = await participant();
    const fill = (fields: Record<string, string>) =>
      pages.post(p.cookie, { csrf: p.csrf, action: 'fill', ...fields }).then((a) => a.status);
    expect(await fill({ text: 'first', 'signature.participant-sign': p.name })).toBe(303);
    const signed = (await viewOf(p.cookie)).documents[0]!.signatures[0]!;
    expect(signed.given?.kind).toBe('TYPED');

    expect(await fill({ text: 'retract' })).toBe(303);
    const seen = JSON.parse((await varsOf(p.tx)).documents!);
    expect(seen.retracted).toBe(
      'pal.documents.clearSignature: "documents/note.png" has no signature "nobody"',
    );
    const sign = (doc: { signatures: { id: string; recordTime: number }[] }) =>
      doc.signatures.find((s) => s.id === 'participant-sign')!.recordTime;
    expect(sign(seen.before[0])).toBeGreaterThan(0);
    expect(sign(seen.after[0])).toBe(0);
    const view = await viewOf(p.cookie);
    expect(view.documents[0]!.signatures[0]!.given).toBeUndefined();
    const records = await h.domain.db
      .selectFrom('audit_log')
      .select(['details'])
      .where('action', '=', 'document.signature_cleared')
      .where('target', '=', p.tx)
      .execute();
    expect(records.map((r) => JSON.parse(r.details!))).toEqual([
      {
        file: FILE,
        signature: 'participant-sign',
        signedBy: p.sso,
        kind: 'TYPED',
        signedAt: new Date(signed.given!.recordTime * 1000).toISOString(),
      },
    ]);
    const events = await h.domain.db
      .selectFrom('outbox_messages')
      .select('payload')
      .where('event_type', '=', 'document.signature_cleared')
      .execute();
    expect(events.map((e) => JSON.parse(e.payload).data)).toContainEqual({
      transactionId: p.tx,
      palId: 'wf-tx',
      documentId: FILE,
      signatureId: 'participant-sign',
      sso: p.sso,
    });

    // Given again: kept as any signature is.
    expect(await fill({ text: 'again', 'signature.participant-sign': p.name })).toBe(303);
    expect((await viewOf(p.cookie)).documents[0]!.signatures[0]!.given?.recordTime).toBeGreaterThan(
      0,
    );
  });
});

const uploadsOf = (tx: string) =>
  h.domain.db
    .selectFrom('transaction_uploads')
    .selectAll()
    .where('transaction_id', '=', tx)
    .orderBy('name')
    .execute();
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');

describe('uploads', () => {
  it('keeps one form of files per person and transaction, and never sends an older kept file over a newer upload', async () => {
    const p = await participant();
    const fileNamed = (name: string) => ({
      'upload.identity': { name, type: 'application/pdf', bytes: PDF },
    });
    const keptOn = () =>
      h.domain.db
        .selectFrom('session_draft_files as d')
        .innerJoin('browser_sessions as s', 's.id_hash', 'd.session_id_hash')
        .select('d.filename')
        .where('s.transaction_id', '=', p.tx)
        .execute();
    const refused = (cookie: string, csrf: string, name: string) =>
      pages.postMultipart(cookie, { csrf, action: 'refuse' }, fileNamed(name));
    expect((await refused(p.cookie, p.csrf, 'first.pdf')).status).toBe(303);
    expect(await keptOn()).toEqual([{ filename: 'first.pdf' }]);
    // The same person enters again (as a mailed link does at each use): the new session's
    // failed form takes the place of the first one's files, not a second form's worth.
    const token = await h.a.json.transactions.createTransactionToken({
      transactionId: p.tx,
      userSSO: p.sso,
    });
    const again = await pages.enter(token);
    const againCsrf = csrfOf(again.page);
    expect((await refused(again.cookie, againCsrf, 'second.pdf')).status).toBe(303);
    expect(await keptOn()).toEqual([{ filename: 'second.pdf' }]);

    // Another participant uploads a file of that name after it was kept.
    const other = await person();
    const otherToken = await h.a.json.transactions.createTransactionToken({
      transactionId: p.tx,
      userSSO: other.sso,
    });
    const theirs = await pages.enter(otherToken);
    expect(
      (
        await pages.postMultipart(
          theirs.cookie,
          { csrf: csrfOf(theirs.page), action: 'fill', text: 'theirs' },
          fileNamed('newer.pdf'),
        )
      ).status,
    ).toBe(303);
    expect((await uploadsOf(p.tx)).map((u) => u.filename)).toEqual(['newer.pdf']);
    // The first person's page no longer offers the older file, and their next form (no file
    // chosen) does not send it over the newer one.
    const page = await pages.page(again.cookie);
    expect(page.text).not.toContain('Kept from your last try');
    expect(
      (await pages.postMultipart(again.cookie, { csrf: againCsrf, action: 'fill', text: 'mine' }))
        .status,
    ).toBe(303);
    expect((await uploadsOf(p.tx)).map((u) => [u.filename, u.sso_id])).toEqual([
      ['newer.pdf', other.sso],
    ]);
    // Gone with that run, which went through.
    expect(await keptOn()).toEqual([]);
  });

  it('keeps a file checked by its bytes with the run; the workflow sees it described', async () => {
    const p = await participant();
    const picture = png(40, 30);
    const answer = await pages.postMultipart(
      p.cookie,
      { csrf: p.csrf, action: 'fill', text: 'with a file' },
      { 'upload.identity': { name: '../../passport.png', type: 'text/plain', bytes: picture } },
    );
    expect(answer.status, answer.text).toBe(303);
    const [kept, ...more] = await uploadsOf(p.tx);
    expect(more).toEqual([]);
    expect(kept).toMatchObject({
      name: 'identity',
      filename: 'passport.png',
      content_type: 'image/png', // the bytes', not the browser's word
      size: picture.length,
      sso_id: p.sso,
    });
    expect(Buffer.from(kept!.content).equals(picture)).toBe(true);
    const seen = JSON.parse((await varsOf(p.tx)).documents!);
    const described = {
      name: 'identity',
      filename: 'passport.png',
      contentType: 'image/png',
      size: picture.length,
      digest: kept!.digest,
      sso: p.sso,
      uploadedAt: expect.any(String),
    };
    expect(seen.uploads).toEqual([described]);
    expect(seen.kept).toEqual([described]);
  });

  it('a file that is not what it says, or of a kind not accepted, brings the person back to the page', async () => {
    const p = await participant();
    const wrong: [Uint8Array, string][] = [
      [Buffer.from('GIF89a;'), 'is not a PNG image, a JPEG image, or a PDF'],
      [png(2, 2).subarray(0, 40), 'is a PNG image cut short'],
      [new Uint8Array(), 'is empty'],
    ];
    for (const [bytes, message] of wrong) {
      const file = { name: 'id.png', type: 'image/png', bytes };
      const answer = await pages.postMultipart(
        p.cookie,
        { csrf: p.csrf, action: 'note', text: `typed with ${message}` },
        { 'upload.identity': file },
      );
      expect(answer.status, answer.text).toBe(303);
      const page = (await pages.page(p.cookie)).text;
      expect(page).toContain(`The file for “Identity document” ${message}`);
      expect(page).toContain(`typed with ${message}`);
    }
    expect(await uploadsOf(p.tx)).toEqual([]);
    expect((await varsOf(p.tx)).note).toBeUndefined();
  });

  it("takes no file the page never offers: another's, of no upload, not an upload", async () => {
    const p = await participant();
    const back: [Record<string, { name: string; type: string; bytes: Uint8Array }>, string][] = [
      [{ 'upload.proof': { name: 'p.pdf', type: 'application/pdf', bytes: PDF } }, 'not yours'],
      [{ 'upload.other': { name: 'x.pdf', type: 'application/pdf', bytes: PDF } }, 'no upload'],
    ];
    for (const [files, message] of back)
      await expectBack(
        await pages.postMultipart(p.cookie, { csrf: p.csrf, action: 'note', text: 'x' }, files),
        p.cookie,
        message,
      );
    // A file part that is no upload's: the body is not the page's form.
    expectRefused(
      await pages.postMultipart(
        p.cookie,
        { csrf: p.csrf, action: 'note', text: 'x' },
        { photo: { name: 'x.pdf', type: 'application/pdf', bytes: PDF } },
      ),
      400,
      'is not an upload',
    );
    expect(await uploadsOf(p.tx)).toEqual([]);
    expect((await varsOf(p.tx)).note).toBeUndefined();
  });

  it('a failed run keeps no file with the transaction (its session keeps it for the next try); a required upload missing runs nothing', async () => {
    const p = await participant();
    expect(
      (
        await pages.postMultipart(
          p.cookie,
          { csrf: p.csrf, action: 'refuse' },
          { 'upload.identity': { name: 'id.pdf', type: 'application/pdf', bytes: PDF } },
        )
      ).status,
    ).toBe(303);
    expect(await uploadsOf(p.tx)).toEqual([]);
    // The session keeps it for the person's next try, and the page says so.
    expect((await pages.page(p.cookie)).text).toContain(
      'Kept from your last try: <bdi>id.pdf</bdi>',
    );
    expect(
      await h.domain.db.selectFrom('session_draft_files').select(['name', 'filename']).execute(),
    ).toContainEqual({ name: 'identity', filename: 'id.pdf' });

    // P3 makes the SSO the owner, who owes the proof of address (a PDF only).
    const owner = await person();
    const url = await h.a.json.pals.createPalToken({ palId: 'wf-tx', userSSO: owner.sso });
    const { cookie, page } = await pages.enter(url.slice(url.indexOf('/services/enter/') + 16));
    const csrf = csrfOf(page);
    const tx = /<dd id="your-role">Owner: you started it<\/dd>/.test(page.text);
    expect(tx).toBe(true);
    expect((await pages.post(cookie, { csrf, action: 'note', text: 'no proof' })).status).toBe(303);
    const after = await pages.page(cookie);
    expect(after.text).toContain('Upload “Proof of address” before you go on: it is required.');
    // A file of a kind not asked for: back to the page, which says so and keeps what was typed.
    expect(
      (
        await pages.postMultipart(
          cookie,
          { csrf, action: 'note', text: 'typed before the wrong file' },
          { 'upload.proof': { name: 'p.png', type: 'image/png', bytes: png(2, 2) } },
        )
      ).status,
    ).toBe(303);
    const wrong = await pages.page(cookie);
    expect(wrong.text).toContain('The file for “Proof of address” is not a PDF');
    expect(wrong.text).toContain('choose another');
    expect(wrong.text).toContain('typed before the wrong file');
    // A file refused is not kept for the next try.
    expect(wrong.text).not.toContain('Kept from your last try: <bdi>p.png</bdi>');
    const proofs = () =>
      h.domain.db
        .selectFrom('transaction_uploads')
        .select('filename')
        .where('name', '=', 'proof')
        .execute();
    expect(await proofs()).toEqual([]);
    expect(
      (
        await pages.postMultipart(
          cookie,
          { csrf, action: 'note', text: 'with proof' },
          { 'upload.proof': { name: 'proof.pdf', type: 'application/pdf', bytes: PDF } },
        )
      ).status,
    ).toBe(303);
    expect((await pages.page(cookie)).text).toContain('noted with proof');
    expect(await proofs()).toEqual([{ filename: 'proof.pdf' }]);
  });
});

describe('files a person may choose', () => {
  it('a file past UPLOAD_MAX_MB brings the person back to the page with what they typed; nothing runs', async () => {
    const p = await participant();
    const mib = (n: number) => Buffer.concat([PDF, Buffer.alloc(Math.round(n * 1024 * 1024))]);
    const fileOf = (bytes: Buffer) => ({ name: 'f.pdf', type: 'application/pdf', bytes });
    const tooLarge = await pages.postMultipart(
      p.cookie,
      { csrf: p.csrf, action: 'note', text: 'typed beside a large file' },
      { 'upload.identity': fileOf(mib(1.1)) },
    );
    expect(tooLarge.status, tooLarge.text).toBe(303);
    const page = await pages.page(p.cookie);
    // Too large alone: said so, not "with the form's other files" (there are none).
    expect(page.text).toContain(
      'is larger than 1 MB, the most a file may be: choose a smaller one.',
    );
    expect(page.text).toContain('typed beside a large file');
    expect((await varsOf(p.tx)).note).toBeUndefined();

    expect(await uploadsOf(p.tx)).toEqual([]);
  });
});

describe('bodies a page never sends', () => {
  it('a field value with a character XML cannot carry (NUL, a control character) runs nothing; the page shows it without them, beside the box', async () => {
    const p = await participant();
    const cases: [string, string, string][] = [
      ['before\u0000after', 'beforeafter', 'a character that cannot be kept'],
      ['x\u0001y', 'xy', 'a character that cannot be kept'],
      ['\u001b[31m', '[31m', 'a character that cannot be kept'],
      ['\u0000'.repeat(50_000) + 'end', 'end', '50,000 characters that cannot be kept'],
    ];
    for (const [text, kept, said] of cases)
      for (const post of [pages.post, pages.postMultipart]) {
        const page = await expectBack(
          await post(p.cookie, { csrf: p.csrf, action: 'note', text, reviewed: 'on' }),
          p.cookie,
          said,
        );
        // Beside the box, and the box holds what is left; the rest of the form as typed.
        expect(page).toContain(`<p class="field-error" id="error-text">${said}`);
        expect(page).toMatch(
          new RegExp(`name="text" value="${kept.replace(/\[/g, '\\[')}"[^>]*aria-invalid="true"`),
        );
        expect(page).toMatch(/name="reviewed" value="true" checked/);
      }
    expect((await varsOf(p.tx)).note).toBeUndefined();
    // Line breaks and tabs are text; a line break is kept as the box has it (LF), as posted CRLF.
    expect(
      (await pages.post(p.cookie, { csrf: p.csrf, action: 'note', text: 'a\r\n\tb' })).status,
    ).toBe(303);
    expect((await varsOf(p.tx)).note).toBe('a\n\tb');
  });
  it('a multipart value that is not UTF-8 runs nothing, and the page shows it with U+FFFD; UTF-8 is taken as sent', async () => {
    const p = await participant();
    const boundary = 'pal-page-boundary';
    const post = (text: Buffer, partHeaders = '') =>
      fetch(h.url + sessionPathOf(p.cookie), {
        method: 'POST',
        redirect: 'manual',
        headers: {
          Cookie: p.cookie,
          Origin: h.url,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
        },
        body: Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${p.csrf}\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="action"\r\n\r\nnote\r\n` +
              `--${boundary}\r\nContent-Disposition: form-data; name="text"\r\n${partHeaders}\r\n`,
          ),
          text,
          Buffer.from(`\r\n--${boundary}--\r\n`),
        ]),
      });
    // Latin-1, and a lone surrogate written as UTF-8 (CESU-8), many times over.
    for (const [bytes, shown] of [
      [Buffer.from('Caf\xe9 bill', 'latin1'), 'Caf\uFFFD bill'],
      [
        Buffer.concat([Buffer.from('half '), Buffer.from([0xed, 0xa0, 0xbd])]),
        'half \uFFFD\uFFFD\uFFFD',
      ],
      [Buffer.alloc(3 * 20_000, Buffer.from([0xed, 0xb0, 0x80])), '\uFFFD'.repeat(60_000)],
    ] as const) {
      const answer = await post(bytes);
      expect(answer.status).toBe(303);
      const page = (await pages.page(p.cookie)).text;
      expect(page).toContain('what was sent for it was not all text (not UTF-8)');
      expect(page).toContain(`name="text" value="${shown}"`);
    }
    expect((await varsOf(p.tx)).note).toBeUndefined();
    expect((await post(Buffer.from('Café bill ✓', 'utf8'))).status).toBe(303);
    expect((await varsOf(p.tx)).note).toBe('Café bill ✓');
    // Whatever charset or type a part names, its bytes are the page's UTF-8 text, kept as sent
    // (no browser names one; read by it, 'Łukasz' became 'Aukasz' and base64 encoded the value).
    for (const [type, text] of [
      ['text/plain; charset=utf-8', 'Łukasz, Zürich'],
      ['text/plain; charset=base64', 'hello'],
      ['text/plain; charset=utf-16le', 'Łódź'],
      ['application/json', '{"a": 1}'],
    ]) {
      const answer = await post(Buffer.from(text!, 'utf8'), `Content-Type: ${type}\r\n`);
      expect(answer.status, type).toBe(303);
      expect((await varsOf(p.tx)).note, type).toBe(text);
    }
  });

  it('answers an oversized, over-long or malformed form with a page, never a 500', async () => {
    const p = await participant();
    const big = await pages.post(p.cookie, {
      csrf: p.csrf,
      action: 'note',
      text: 'x'.repeat(1100 * 1024),
    });
    expect(big.status).toBe(413);
    expect(big.type).toBe('text/html; charset=utf-8');
    // Nothing of it could be read to keep: the page says so, and where what was typed still is.
    expect(big.text).toContain('Nothing in it was kept, and nothing was done.');
    const many: Record<string, string> = { csrf: p.csrf, action: 'note' };
    for (let i = 0; i < 2100; i++) many[`f${i}`] = '1';
    expect((await pages.post(p.cookie, many)).status).toBe(413);
    expect((await pages.postMultipart(p.cookie, many)).status).toBe(413);
    // In multipart: one control over its cap, and controls each within it but too many together.
    const long = await pages.postMultipart(p.cookie, {
      csrf: p.csrf,
      action: 'note',
      text: 'x'.repeat(1100 * 1024),
    });
    expect(long.status).toBe(413);
    expect(long.text).toContain('is too long');
    const together: Record<string, string> = { csrf: p.csrf, action: 'note' };
    for (let i = 0; i < 12; i++) together[`f${i}`] = 'x'.repeat(100 * 1024);
    const tooMuch = await pages.postMultipart(p.cookie, together);
    expect(tooMuch.status).toBe(413);
    expect(tooMuch.text).toContain('bytes of text');
    // Files past the most a form may hold, whatever their controls: refused, not read one by one.
    const files: Record<string, { name: string; type: string; bytes: Uint8Array }> = {};
    for (let i = 0; i < 12; i++)
      files[`upload.f${i}`] = { name: `f${i}.png`, type: 'image/png', bytes: new Uint8Array(1) };
    const manyFiles = await pages.postMultipart(p.cookie, { csrf: p.csrf, action: 'note' }, files);
    expect(manyFiles.status).toBe(413);
    expect(manyFiles.text).toContain('more than 10 files');
    const named = await pages.postMultipart(p.cookie, {
      csrf: p.csrf,
      action: 'note',
      ['n'.repeat(300)]: 'x',
    });
    expect(named.status).toBe(413);
    expect(named.text).toContain('longer than 256 bytes');
    const broken = await fetch(h.url + sessionPathOf(p.cookie), {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: p.cookie, 'Content-Type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="csrf"\r\n\r\nabc',
    });
    expect(broken.status).toBe(400);
    expect(await broken.text()).toContain('not a readable multipart/form-data body');
    const json = await fetch(h.url + sessionPathOf(p.cookie), {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: p.cookie, 'Content-Type': 'application/json' },
      body: JSON.stringify({ csrf: p.csrf, action: 'note', text: 'json' }),
    });
    expect(json.status).toBe(415);
    expect(json.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect((await varsOf(p.tx)).note).toBeUndefined();
  });
});

describe('the manifest actions at deploy', () => {
  it('refuses a pal whose actions are wrong, naming the file and the key', async () => {
    const folder = join(tempDir().path, 'bad-actions');
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, 'pal.json'),
      JSON.stringify({
        id: 'bad-actions',
        modes: { transaction: true },
        actions: {
          transaction: [
            { name: 'submit', label: 'Submit' },
            { name: 'submit', label: 'Again' },
            { name: 'two words', label: 'X' },
          ],
        },
      }),
    );
    const error = await deployPal(h.domain, h.a.enterpriseId, folder).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ManifestError);
    expect((error as Error).message).toBe(
      [
        `${folder}/pal.json: actions.transaction[2].name: expected the name of an export of the module (a JavaScript identifier)`,
        `${folder}/pal.json: actions.transaction[1].name: "submit" is already the name of actions.transaction[0]`,
      ].join('\n'),
    );
  });
});
