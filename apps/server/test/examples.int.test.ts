// The example pals that `npm start` deploys, run over HTTP as the README and docs/workflows.md
// show them: expense approval with an approver and a mail, the team directory in console mode and
// through U1 with paging, and customer onboarding step by step.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PEOPLE, ensureDemoPeople } from '../src/domain/demo.js';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { readVariables, transactionScope } from '../src/storage/variables.js';
import { blankPdf, inkPng } from './documents.js';
import { startHarness, type Harness } from './harness.js';
import {
  cookieOf,
  csrfOf,
  sessionBrowser,
  sessionPathOf,
  type SessionBrowser,
} from './session-pages.js';

const EXAMPLES = fileURLToPath(new URL('../../../examples/pals/', import.meta.url));
const post = (values: Record<string, string>) => ({
  postData: Object.entries(values).map(([name, value]) => ({ name, value })),
});

let h: Harness;
let pages: SessionBrowser;
beforeAll(async () => {
  h = await startHarness({ smtp: true });
  pages = sessionBrowser(h.url);
  for (const id of ['expense-approval', 'team-directory', 'customer-onboarding'])
    await deployPal(h.domain, h.b.enterpriseId, resolve(EXAMPLES, id));
});
afterAll(() => h?.close());

describe('the example pals', () => {
  it('expense approval: submit with an approver (who gets a mail), then approve', async () => {
    const client = h.b.xml;
    const approver = await createSso(h.domain, h.b.enterpriseId, {
      firstName: 'Mia',
      lastName: 'Manager',
      email: 'mia.manager@example.test',
    });
    const id = await client.transactions.createTransaction({ palId: 'expense-approval' });
    const submitted = await client.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({
        step: 'submit',
        amount: '120.50',
        description: 'Train to Lyon',
        approver,
      }),
    });
    expect(submitted).toMatchObject({
      success: true,
      recordsProcessed: 1,
      messages: [{ message: 'Submitted CHF 120.50 for approval' }],
    });
    expect(h.mails.at(-1)?.envelope.to).toEqual(['mia.manager@example.test']);
    expect(h.mails.at(-1)?.mail.subject).toBe('Expense claim of CHF 120.50 to approve');
    expect(await client.transactions.searchTransactions({ sso: approver })).toEqual([
      expect.objectContaining({ id, status: 'SUBMITTED' }),
    ]);

    const invalid = await client.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'submit', amount: 'lots' }),
    });
    expect(invalid.success).toBe(false);
    expect(invalid.messages?.[0]).toEqual({
      message: 'amount: write the sum in CHF, such as 120.50',
      type: 'INVALID_ARGUMENT',
    });

    const approved = await client.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'approve' }),
    });
    expect(approved.messages?.[0]?.message).toBe('Approved CHF 120.50');
    const claim = await client.transactions.runTransaction({
      transactionId: id,
      transactionContent: {},
    });
    expect(claim).toEqual([
      { name: 'status', value: 'APPROVED' },
      { name: 'amount', value: '120.50' },
      { name: 'description', value: 'Train to Lyon' },
      { name: 'submissions', value: '1' },
    ]);
    const again = await client.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'approve' }),
    });
    expect(again).toMatchObject({
      success: false,
      messages: [
        { type: 'WORKFLOW_ERROR', message: 'Error: the claim is APPROVED, not SUBMITTED' },
      ],
    });
  });

  // Found by the Chromium probe: a description of the 65,536 characters the page takes, and the
  // mail's own words before it, failed the submission with "TypeError: pal.mail.send: text is longer than 65536 characters".
  it('expense approval: a description as long as the page takes is kept, and quoted cut in the mail', async () => {
    const approver = await createSso(h.domain, h.b.enterpriseId, {
      firstName: 'Lou',
      lastName: 'Long',
      email: 'lou.long@example.test',
    });
    const id = await h.b.json.transactions.createTransaction({ palId: 'expense-approval' });
    // As long as the page's box takes (65,536), with the mail's own words before it.
    const description = `${'Hotel in Basel, three nights. '.repeat(2184)}𝄞`.slice(0, 65_530);
    const submitted = await h.b.json.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'submit', amount: '300.00', description, approver }),
    });
    expect(submitted.success, JSON.stringify(submitted.messages)).toBe(true);
    const text = h.mails.at(-1)!.mail.text!;
    expect(text).toContain('… (the claim has the rest)');
    expect(text.length).toBeLessThan(3000);
  });

  it('team directory: C7 searches, C2 answers the first match, U1 pages the matches', async () => {
    const client = h.b.json;
    const found = await client.console.runConsoleWorkflow({
      palId: 'team-directory',
      consoleContent: post({ q: 'compilers' }),
    });
    expect(found.messages?.[0]?.message).toBe('4 people match "compilers"');
    expect(found.data?.map((d) => d.name)).toEqual([
      'Frances Allen',
      'Grace Hopper',
      'Jean Sammet',
      'Niklaus Wirth',
    ]);
    const first = await client.console.runConsolePal({
      palId: 'team-directory',
      consoleContent: post({ q: 'hopper' }),
    });
    expect(first).toContainEqual({ name: 'office', value: 'Arlington' });
    const page = await client.user.runUserWorkflow({
      workflow: 'team-directory',
      action: 'search',
      serviceRequest: {
        sizeLimit: 0,
        listLimit: 0,
        paging: true,
        pageSize: 2,
        page: 2,
        debug: false,
        payload: { data: { q: 'platform' }, dataMaps: {}, dataLists: {} },
      },
    });
    expect([page.currentPage, page.totalPages, page.successMessage]).toEqual([
      2,
      3,
      '5 people match "platform"',
    ]);
    expect(page.payload?.dataLists.people?.rows?.map((r) => r[0])).toEqual([
      'Edsger Dijkstra',
      'Ken Thompson',
    ]);
  });

  it('team directory in a browser (C6): two buttons, and what they answer in words', async () => {
    const colleague = await createSso(h.domain, h.b.enterpriseId, {
      firstName: 'Ken',
      lastName: 'Colleague',
      email: 'ken.colleague@example.test',
    });
    await h.b.json.console.grantConsolePalAccess({ palId: 'team-directory', ssoId: colleague });
    // C6 answers the token; its link is /services/enter/{token}.
    const token = await h.b.json.console.createConsoleToken({
      palId: 'team-directory',
      ssoId: colleague,
    });
    const { cookie, page } = await pages.enter(token);
    // Not a dead end: the console's buttons, though the page has no field to type into.
    expect(page.text).not.toContain('There is nothing for you to do here now.');
    expect(page.text).toContain(
      '<button type="submit" name="action" value="everyone" class="primary">List everyone</button>',
    );
    const listed = await pages.post(cookie, { csrf: csrfOf(page), action: 'everyone' });
    expect(listed.status).toBe(303);
    const everyone = (await pages.page(cookie)).text;
    expect(everyone).toContain(
      '<li data-type="INFO">Grace Hopper: Compilers, Arlington, +1 703 555 0108</li>',
    );
    expect(everyone.match(/<li data-type="INFO">/g)).toHaveLength(20);
    await pages.post(cookie, { csrf: csrfOf(page), action: 'teams' });
    expect((await pages.page(cookie)).text).toContain(
      '<li data-type="INFO">Compilers: 4 people</li>',
    );
    // An empty search through C7 says how many there are, not that 20 match "".
    const all = await h.b.json.console.runConsoleWorkflow({
      palId: 'team-directory',
      consoleContent: post({}),
    });
    expect(all.messages?.[0]?.message).toBe('20 people in the directory');
  });

  it('customer onboarding: company, documents, terms, then the transaction is complete', async () => {
    const client = h.b.json;
    const id = await client.transactions.createTransaction({ palId: 'customer-onboarding' });
    const run = (content: object) =>
      client.transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: content,
      });
    expect((await run(post({ step: 'company', company: 'Initech' }))).messages).toHaveLength(2);
    // An address without a dot in its domain is a typing slip more often than an address.
    const slip = await run(
      post({ step: 'company', company: 'Initech', vatId: 'CHE123456789', email: 'ops@initech' }),
    );
    expect(slip.messages).toEqual([
      { message: 'email: give an address such as name@example.com', type: 'INVALID_ARGUMENT' },
    ]);
    const company = await run(
      post({
        step: 'company',
        company: 'Initech',
        // As people write it: the marks are dropped, the letters made capitals.
        vatId: 'che-123.456.789',
        email: 'it@initech.example',
      }),
    );
    expect(company.messages?.[0]?.message).toBe(
      'Still missing: an identity document and the signed terms',
    );
    expect((await readVariables(h.domain.db, transactionScope(id))).values.vatId).toBe(
      'CHE123456789',
    );
    await run({
      ...post({ step: 'documents' }),
      documents: [
        { filename: 'passport.pdf', contentType: 'application/pdf', content: 'JVBERi0=' },
      ],
    });
    const done = await run(post({ step: 'terms', accept: 'yes' }));
    expect(done).toMatchObject({
      success: true,
      recordsProcessed: 3,
      messages: [{ message: 'Initech is onboarded' }],
    });
    expect((await client.transactions.getTransaction({ id })).status).toBe('READY');
  });
});

describe('expense approval in a browser (the session form, as a browser posts it)', () => {
  it('the employee fills in and signs, the mailed manager approves and signs, the completed claim has both', async () => {
    await ensureDemoPeople(h.domain, h.b.enterpriseId);
    const { employee, manager } = DEMO_PEOPLE;
    const { cookie, page } = await enterAsEmployee('expense-approval');
    // The pal's `enter` filled in the employee's name from input.person.
    expect(/<input[^>]*name="employeeName"[^>]*>/.exec(page.text)?.[0]).toContain(
      `value="${employee.firstName} ${employee.lastName}"`,
    );
    const mailsBefore = h.mails.length;
    const claim = {
      csrf: csrfOf(page),
      action: 'submit',
      employeeName: 'Erika Employee',
      claimDate: '2025-11-20',
      costCentre: 'CC-4711',
      category: 'Travel',
      amount: '184.60',
      description: 'Train Zurich to Geneva and back, customer workshop',
      receiptsAttached: 'true',
      'signature.employee-signature': `data:image/png;base64,${inkPng(300, 100).toString('base64')}`,
    };
    // The box says the receipts are attached, but no file is: the workflow says so at the box.
    expect((await pages.post(cookie, claim)).status).toBe(303);
    const noReceipts = await pages.page(cookie);
    expect(noReceipts.text).toContain(
      '<p class="field-error" id="error-receiptsAttached">upload the receipts below, or untick this box</p>',
    );
    expect(noReceipts.text).toMatch(/<input type="file" id="upload-0" name="upload.receipts"/);
    // With the photo of the receipts, as the page's multipart form sends it, but a wrong amount:
    // the file is kept with the session, and the page says so.
    const receipts = { name: 'receipts.png', type: 'image/png', bytes: inkPng(40, 30) };
    const wrong = await pages.postMultipart(
      cookie,
      { ...claim, amount: 'lots' },
      {
        'upload.receipts': receipts,
      },
    );
    expect(wrong.status, wrong.text).toBe(303);
    const kept = await pages.page(cookie);
    expect(kept.text).toContain('<p class="field-error" id="error-amount">');
    expect(kept.text).toContain(
      'Kept from your last try: <bdi>receipts.png</bdi> (1 KB). It is sent with this form',
    );
    expect(kept.text).toContain('aria-describedby="upload-0-draft upload-0-hint"');
    // Sent again without a file chosen (the browser forgot it): the kept one goes with it.
    const submitted = await pages.postMultipart(cookie, claim, {
      'upload.receipts': { name: '', type: 'application/octet-stream', bytes: new Uint8Array() },
    });
    expect(submitted.status, submitted.text).toBe(303);
    const after = await pages.page(cookie);
    expect(after.text).toContain('Submitted CHF 184.60 for approval');
    expect(after.text).toContain('Uploaded: <a href="');
    const id = (await h.b.json.transactions.searchTransactions({ sso: employee.sso }))[0]!.id!;
    const [upload] = await h.domain.db
      .selectFrom('transaction_uploads')
      .select(['filename', 'content'])
      .where('transaction_id', '=', id)
      .execute();
    expect(upload!.filename).toBe('receipts.png');
    expect(Buffer.from(upload!.content).equals(receipts.bytes)).toBe(true);
    // Gone with the run that took it.
    expect(await h.domain.db.selectFrom('session_draft_files').selectAll().execute()).toEqual([]);
    // Submitted, the claim is the employee's no more: its values are shown, not controls.
    expect(after.text).not.toMatch(/<(input|textarea|select)[^>]*name="(amount|description)"/);
    expect(after.text).not.toContain('<input type="file"');
    expect(after.text).not.toContain('name="signature.employee-signature"');
    expect(after.text).toContain('There is nothing for you to do here now.');
    expect((await h.b.json.transactions.getTransaction({ id })).status).toBe('SUBMITTED');

    // The manager's mail: its link's POST enters the claim and runs `review`.
    expect(h.mails.length).toBe(mailsBefore + 1);
    expect(h.mails.at(-1)?.envelope.to).toEqual([manager.email]);
    const link = mailedLinkIn(h.mails.at(-1)!.mail.text!);
    // The mail page's button: an empty form post, as a browser sends it.
    const entered = await pages.post(undefined, {}, {}, link);
    expect(entered.status).toBe(303);
    const managerCookie = cookieOf(entered);
    const managerPage = await pages.page(managerCookie);
    expect(managerPage.text).toContain('approve and sign, or return it');
    // The manager opens the receipts Erika gave, from the page: its link, with their cookie.
    const receiptsPath = `${sessionPathOf(managerCookie)}/uploads/receipts`;
    expect(managerPage.text).toContain(
      `Uploaded: <a href="${receiptsPath}" target="_blank" rel="noopener"><bdi>receipts.png</bdi></a> (1 KB)`,
    );
    const opened = await fetch(h.url + receiptsPath, { headers: { Cookie: managerCookie } });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toBe('image/png');
    expect(opened.headers.get('content-disposition')).toBe(
      `inline; filename="receipts.png"; filename*=UTF-8''receipts.png`,
    );
    expect(opened.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(Buffer.from(await opened.arrayBuffer()).equals(receipts.bytes)).toBe(true);
    // Not without the session's cookie, nor under a name nothing was uploaded as.
    expect((await fetch(h.url + receiptsPath)).status).toBe(401);
    const unknown = await fetch(`${h.url}${sessionPathOf(managerCookie)}/uploads/identity`, {
      headers: { Cookie: managerCookie },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Nothing was uploaded under this name here.');
    // Approving needs Morgan's signature (pal.json's "signatures"), returning does not.
    expect(managerPage.text).toContain(
      '<legend>Your signature <span class="required">(required for “Approve and sign”)</span></legend>',
    );

    // Approving without signing stops before the workflow runs, with the note kept; signed
    // (typed), it completes.
    const unsigned = await pages.post(managerCookie, {
      csrf: csrfOf(managerPage),
      action: 'approve',
      managerNote: 'Fine.',
    });
    expect(unsigned.status).toBe(303);
    const stopped = (await pages.page(managerCookie)).text;
    expect(stopped).toContain(
      'Sign before you go on: your signature is needed for “Approve and sign”.',
    );
    expect(stopped).toContain('Fine.</textarea>');
    expect((await h.b.json.transactions.getTransaction({ id })).status).toBe('SUBMITTED');
    const approved = await pages.post(managerCookie, {
      csrf: csrfOf(managerPage),
      action: 'approve',
      managerNote: 'Approved, thank you.',
      'signature.manager-signature': 'Morgan Manager',
    });
    expect(approved.status, approved.text).toBe(303);
    expect((await h.b.json.transactions.getTransaction({ id })).status).toBe('APPROVED');
    expect(
      await h.b.json.transactions.searchTransactions({ systemStatus: 'COMPLETED' as never }),
    ).toContainEqual(expect.objectContaining({ id }));
    // Erika's page no longer shows her submission's message, which the approval made old; her
    // claim's status says where it stands.
    const erikaLater = await pages.page(cookie);
    expect(erikaLater.text).not.toContain('Submitted CHF 184.60 for approval');
    expect(erikaLater.text).toContain(
      '<dd id="status">Approved (completed: the work on it is done)</dd>',
    );
    // The mail's link, opened again after the approval, asks for nothing more.
    const later = await pages.post(undefined, {}, {}, link);
    expect(later.status).toBe(303);
    const laterPage = await pages.page(cookieOf(later));
    expect(laterPage.text).toContain(
      'Claim of CHF 184.60 (Train Zurich to Geneva and back, customer workshop): approved. There is nothing more for you to do.',
    );
    expect(laterPage.text).not.toContain('approve and sign');

    await h.server.outbox.drain();
    const download = await fetch(`${h.url}${sessionPathOf(managerCookie)}/documents/0/completed`, {
      headers: { Cookie: managerCookie },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe(
      'attachment; filename="claim-form-completed.pdf"',
    );
    // The page's "Open" link shows it in the browser.
    const shown = await fetch(
      `${h.url}${sessionPathOf(managerCookie)}/documents/0/completed?view`,
      { headers: { Cookie: managerCookie } },
    );
    expect(shown.headers.get('content-disposition')).toBe(
      'inline; filename="claim-form-completed.pdf"',
    );
    expect(shown.headers.get('content-type')).toBe('application/pdf');
    const text = pdftotext(new Uint8Array(await download.arrayBuffer()));
    for (const expected of [
      'Erika Employee',
      'CC-4711',
      '184.60',
      'customer workshop',
      'Approved, thank you.',
      'Evidence of signatures',
      'erika.employee@demo.example',
      'morgan.manager@demo.example',
      'role owner',
      'role manager',
      id,
    ])
      expect(text).toContain(expected);
  });
});

describe('a guest (P3 with userSSO=auto)', () => {
  it('signs with a name they type, not the made-up name of their guest SSO', async () => {
    await ensureDemoPeople(h.domain, h.b.enterpriseId);
    const url = await h.b.json.pals.createPalToken({ palId: 'expense-approval', userSSO: 'auto' });
    const { cookie, page } = await pages.enter(/\/services\/enter\/(\S+)$/.exec(url)![1]!);
    expect(page.text).not.toContain('Sign as Guest');
    expect(page.text).not.toContain('id="signed-in-as"');
    expect(page.text).toContain('Type your full name to sign');
    const answer = await pages.post(cookie, {
      csrf: csrfOf(page),
      action: 'submit',
      employeeName: 'Ada Guest',
      amount: '12.00',
      description: "A guest's taxi",
      receiptsAttached: 'false',
      'signature.employee-signature': 'Ada Guest',
    });
    expect(answer.status, answer.text).toBe(303);
    expect((await pages.page(cookie)).text).toContain('Submitted CHF 12.00 for approval');
    const [signature] = await h.domain.db
      .selectFrom('transaction_signatures')
      .select(['kind', 'text', 'signer_name', 'signer_email'])
      .where('signature_id', '=', 'employee-signature')
      .where('text', '=', 'Ada Guest')
      .execute();
    // The evidence has no made-up name or address of the guest SSO.
    expect(signature).toEqual({
      kind: 'TYPED',
      text: 'Ada Guest',
      signer_name: null,
      signer_email: null,
    });
  });
});

describe('a returned expense claim goes back to the employee', () => {
  it("the manager's note is the reason, the employee is mailed a link back, changes the claim and submits it again", async () => {
    await ensureDemoPeople(h.domain, h.b.enterpriseId);
    const { employee, manager } = DEMO_PEOPLE;
    const { cookie, page } = await enterAsEmployee('expense-approval');
    const claim = {
      employeeName: 'Erika Employee',
      claimDate: '2025-11-21',
      costCentre: 'CC-4711',
      category: 'Meals',
      amount: '42.00',
      description: 'Team lunch',
      receiptsAttached: 'false',
    };
    const mailsBefore = h.mails.length;
    expect(
      (
        await pages.post(cookie, {
          csrf: csrfOf(page),
          action: 'submit',
          ...claim,
          'signature.employee-signature': 'Erika Employee',
        })
      ).status,
    ).toBe(303);
    await h.server.outbox.drain();
    const managerMail = h.mails[mailsBefore]!;
    expect(managerMail.envelope.to).toEqual([manager.email]);
    const managerLink = mailedLinkIn(managerMail.mail.text!);
    const managerCookie = cookieOf(await pages.post(undefined, {}, {}, managerLink));
    const managerPage = await pages.page(managerCookie);

    // Without a note the claim stays with the manager, who is told what to write, at the note.
    await pages.post(managerCookie, { csrf: csrfOf(managerPage), action: 'returnClaim' });
    const noNote = (await pages.page(managerCookie)).text;
    expect(noNote).toContain(
      '<p class="field-error" id="error-managerNote">say what the employee should change</p>',
    );
    expect(noNote).toContain('<a href="#error-managerNote">Manager’s note</a>: say what');
    await h.server.outbox.drain();
    expect(h.mails.length).toBe(mailsBefore + 1);
    await pages.post(managerCookie, {
      csrf: csrfOf(managerPage),
      action: 'returnClaim',
      managerNote: 'Please attach the receipt.',
    });
    const returned = await pages.page(managerCookie);
    const id = (await h.b.json.transactions.searchTransactions({ sso: employee.sso })).find(
      (t) => t.status === 'RETURNED',
    )!.id!;
    expect(returned.text).toContain(
      'Returned to the employee, who is mailed a link to it: Please attach the receipt.',
    );

    // The employee's mail leads back to the claim, with the reason and the button to submit again.
    await h.server.outbox.drain();
    expect(h.mails.length).toBe(mailsBefore + 2);
    const employeeMail = h.mails.at(-1)!;
    expect(employeeMail.envelope.to).toEqual([employee.email]);
    expect(employeeMail.mail.text).toContain('Please attach the receipt.');
    const employeeLink = mailedLinkIn(employeeMail.mail.text!);
    const again = cookieOf(await pages.post(undefined, {}, {}, employeeLink));
    const reopened = await pages.page(again);
    expect(reopened.text).toContain('Returned by your manager: Please attach the receipt.');
    expect(reopened.text).toContain('>Submit the claim</button>');
    // The return took the employee's signature back: what they submit now, they sign anew.
    expect(reopened.text).toContain('Sign as <span class="typed-name">Erika Employee</span>');
    const cleared = await h.domain.db
      .selectFrom('audit_log')
      .select(['action', 'details'])
      .where('action', '=', 'document.signature_cleared')
      .where('target', '=', id)
      .execute();
    expect(cleared).toHaveLength(1);
    expect(JSON.parse(cleared[0]!.details!)).toMatchObject({
      file: 'documents/claim-form.pdf',
      signature: 'employee-signature',
      signedBy: employee.sso,
    });
    await pages.post(again, {
      csrf: csrfOf(reopened),
      action: 'submit',
      ...claim,
      receiptsAttached: 'true',
    });
    expect((await pages.page(again)).text).toContain(
      'Sign before you go on: your signature is required.',
    );
    expect((await h.b.json.transactions.getTransaction({ id })).status).toBe('RETURNED');
    await pages.postMultipart(
      again,
      {
        csrf: csrfOf(reopened),
        action: 'submit',
        ...claim,
        receiptsAttached: 'true',
        'signature.employee-signature': 'Erika Employee',
      },
      {
        'upload.receipts': {
          name: 'receipt.pdf',
          type: 'application/pdf',
          bytes: await blankPdf([420, 595]),
        },
      },
    );
    expect((await h.b.json.transactions.getTransaction({ id })).status).toBe('SUBMITTED');
    // Last time's note is gone: a second return needs a reason of its own.
    const secondLook = await pages.page(managerCookie);
    expect(secondLook.text).not.toContain('Please attach the receipt.</textarea>');
    // And the manager is asked again.
    await h.server.outbox.drain();
    expect(h.mails.at(-1)?.envelope.to).toEqual([manager.email]);
    // The employee's link, opened again once the claim moved on, says where it stands now.
    const later = await pages.page(cookieOf(await pages.post(undefined, {}, {}, employeeLink)));
    expect(later.text).toContain(
      'Claim of CHF 42.00 (Team lunch): waiting for the manager’s approval. You are mailed when your manager has decided.',
    );
    expect(later.text).not.toContain('Returned by your manager');
  });
});

describe("the expense claim's own checks", () => {
  it('asks for a real date and a sum it can take, each at its field, and keeps a name typed over', async () => {
    await ensureDemoPeople(h.domain, h.b.enterpriseId);
    const { employee } = DEMO_PEOPLE;
    const claimsOf = async () =>
      (await h.b.json.transactions.searchTransactions({ sso: employee.sso })).map((t) => t.id);
    const before = await claimsOf();
    const { cookie, page } = await enterAsEmployee('expense-approval');
    const [id] = (await claimsOf()).filter((t) => !before.includes(t));
    const claim = {
      csrf: csrfOf(page),
      action: 'submit',
      employeeName: 'Erika M. Employee',
      claimDate: '',
      costCentre: 'CC-4711',
      category: 'Meals',
      amount: '123456789',
      description: 'Team lunch',
      receiptsAttached: 'false',
      'signature.employee-signature': 'Erika Employee',
    };
    const errorAt = async (field: string) =>
      new RegExp(`<p class="field-error" id="error-${field}">([^<]*)</p>`).exec(
        (await pages.page(cookie)).text,
      )?.[1];
    await pages.post(cookie, claim);
    expect(await errorAt('claimDate')).toBe('give the date of the claim');
    expect(await errorAt('amount')).toBe('a claim is at most CHF 9999999.99');
    // A browser without a date picker sends what was typed.
    for (const claimDate of ['31/12/2025', '2025-02-30', '2025-1-5']) {
      await pages.post(cookie, { ...claim, claimDate, amount: '12.00' });
      expect(await errorAt('claimDate'), claimDate).toMatch(
        /^write the date as year-month-day, such as \d{4}-\d{2}-\d{2}$/,
      );
    }
    await pages.post(cookie, { ...claim, claimDate: '2025-02-28', amount: '0012.00' });
    expect((await h.b.json.transactions.getTransaction({ id: id! })).status).toBe('SUBMITTED');
    const name = await h.domain.db
      .selectFrom('transaction_field_values')
      .select('value')
      .where('transaction_id', '=', id!)
      .where('field_id', '=', 'employeeName')
      .executeTakeFirst();
    expect(name?.value).toBe('Erika M. Employee');
    expect((await pages.page(cookie)).text).toContain('Submitted CHF 12.00 for approval');
  });
});

describe('customer onboarding in a browser', () => {
  it('company details and signed terms complete it; the completed terms carry them', async () => {
    await ensureDemoPeople(h.domain, h.b.enterpriseId);
    const { cookie, page } = await enterAsEmployee('customer-onboarding');
    const form = {
      csrf: csrfOf(page),
      action: 'submit',
      company: 'Initech AG',
      vatId: 'CHE123456789',
      address: 'Bahnhofstrasse 1\n8001 Zurich',
      email: 'it@initech.example',
      'signature.customer-signature': 'Erika Employee',
    };
    const passport = {
      'upload.identity': { name: 'passport.pdf', type: 'application/pdf', bytes: PASSPORT },
    };
    // No identity document: the service stops the form before any run.
    expect((await pages.postMultipart(cookie, { ...form, acceptTerms: 'true' })).status).toBe(303);
    expect((await pages.page(cookie)).text).not.toContain('is onboarded');
    // The terms not accepted: the workflow says so, and nothing is kept.
    expect((await pages.postMultipart(cookie, form, passport)).status).toBe(303);
    // Named by the field's label, linked to its words under the box.
    const refused = (await pages.page(cookie)).text;
    expect(refused).toContain(
      '<a href="#error-acceptTerms">We accept these terms of business</a>: tick the box to accept the terms',
    );
    expect(refused).toContain(
      '<p class="field-error" id="error-acceptTerms">tick the box to accept the terms</p>',
    );
    expect(
      (await pages.postMultipart(cookie, { ...form, acceptTerms: 'true' }, passport)).status,
    ).toBe(303);
    expect((await pages.page(cookie)).text).toContain('Initech AG is onboarded');
    // The document they gave opens from their page as a PDF; this transaction has no receipts
    // (another transaction's files are not reachable from its session).
    const identity = await fetch(`${h.url}${sessionPathOf(cookie)}/uploads/identity`, {
      headers: { Cookie: cookie },
    });
    expect(identity.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await identity.arrayBuffer()).equals(PASSPORT)).toBe(true);
    const receipts = await fetch(`${h.url}${sessionPathOf(cookie)}/uploads/receipts`, {
      headers: { Cookie: cookie },
    });
    expect(receipts.status).toBe(404);
    // A session of another onboarding, which has given nothing, does not reach this one's
    // identity document under the same name.
    const other = await enterAsEmployee('customer-onboarding');
    const notTheirs = await fetch(`${h.url}${sessionPathOf(other.cookie)}/uploads/identity`, {
      headers: { Cookie: other.cookie },
    });
    expect(notTheirs.status).toBe(404);
    // Nor with the other session's cookie under this page's address.
    const name = cookie.slice(0, cookie.indexOf('='));
    const forged = await fetch(`${h.url}${sessionPathOf(cookie)}/uploads/identity`, {
      headers: { Cookie: `${name}=${other.cookie.slice(other.cookie.indexOf('=') + 1)}` },
    });
    expect(forged.status).toBe(401);
    const tx = (
      await h.b.json.transactions.searchTransactions({
        palId: 'customer-onboarding',
        status: 'READY',
      })
    )[0]!;
    expect((await readVariables(h.domain.db, transactionScope(tx.id!))).values).toMatchObject({
      documents: 'passport.pdf',
      'done.documents': 'yes',
    });
    // The completion job of the outbox writes the completed PDF after the run's commit.
    await h.server.outbox.drain();
    const download = await fetch(`${h.url}${sessionPathOf(cookie)}/documents/0/completed`, {
      headers: { Cookie: cookie },
    });
    expect(download.status).toBe(200);
    const text = pdftotext(new Uint8Array(await download.arrayBuffer()));
    for (const expected of ['Initech AG', 'CHE123456789', '8001 Zurich', 'Erika Employee'])
      expect(text).toContain(expected);
  });
});

/** A small PDF, as a scanned identity document would be. */
/** A P3 entry of the demo employee into a new transaction of the pal: the session's cookie and page. */
async function enterAsEmployee(palId: string) {
  const url = await h.b.json.pals.createPalToken({ palId, userSSO: DEMO_PEOPLE.employee.sso });
  return pages.enter(/\/services\/enter\/(\S+)$/.exec(url)![1]!);
}

/** The path and query of the link a workflow's mail carries (PUBLIC_URL is the harness's). */
function mailedLinkIn(text: string): string {
  return /http:\/\/pal\.example\.test:8443(\/services\/mail\?\S+)/.exec(text)![1]!;
}

const PASSPORT = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

function pdftotext(pdf: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'pal-examples-'));
  try {
    writeFileSync(join(dir, 'claim.pdf'), pdf);
    return execFileSync('pdftotext', [join(dir, 'claim.pdf'), '-'])
      .toString('utf8')
      .replace(/\s+/g, ' ');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
