// The example pals that `npm start` deploys, run over HTTP as the README and docs/workflows.md
// show them: expense approval with an approver and a mail, the team directory in console mode and
// through U1 with paging, and customer onboarding step by step.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { startHarness, type Harness } from './harness.js';

const EXAMPLES = fileURLToPath(new URL('../../../examples/pals/', import.meta.url));
const post = (values: Record<string, string>) => ({
  postData: Object.entries(values).map(([name, value]) => ({ name, value })),
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ smtp: true });
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
      messages: [{ message: 'Submitted 120.50 for approval' }],
    });
    expect(h.mails.at(-1)?.envelope.to).toEqual(['mia.manager@example.test']);
    expect(h.mails.at(-1)?.mail.subject).toBe('Expense claim of 120.50 to approve');
    expect(await client.transactions.searchTransactions({ sso: approver })).toEqual([
      expect.objectContaining({ id, status: 'SUBMITTED' }),
    ]);

    const invalid = await client.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'submit', amount: 'lots' }),
    });
    expect(invalid.success).toBe(false);
    expect(invalid.messages?.[0]).toEqual({
      message: 'amount: a sum such as 120.50',
      type: 'INVALID_ARGUMENT',
    });

    const approved = await client.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'approve' }),
    });
    expect(approved.messages?.[0]?.message).toBe('Approved 120.50');
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

  it('customer onboarding: company, documents, terms, then the transaction is complete', async () => {
    const client = h.b.json;
    const id = await client.transactions.createTransaction({ palId: 'customer-onboarding' });
    const run = (content: object) =>
      client.transactions.runTransactionWorkflow({
        transactionId: id,
        transactionContent: content,
      });
    expect((await run(post({ step: 'company', company: 'Initech' }))).messages).toHaveLength(2);
    const company = await run(
      post({
        step: 'company',
        company: 'Initech',
        vatId: 'DE123456789',
        email: 'it@initech.example',
      }),
    );
    expect(company.messages?.[0]?.message).toBe('Still missing: documents, terms');
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
