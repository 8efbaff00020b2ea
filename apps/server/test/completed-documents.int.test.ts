// Completed documents over HTTP (docs/web-mode.md, "Completed documents"): a transaction with a
// value and a signature kept reaches COMPLETED through a workflow run, the outbox's completion job
// writes the completed PDF, the session's person downloads it (poppler reads the value and the
// evidence), its SHA-256 becomes the document's digest, another enterprise's session gets 404,
// and before the job has run there is nothing to download.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getCompletedDocument, runCompletionJob } from '../src/domain/completed-documents.js';
import { deployPal } from '../src/domain/pals.js';
import { transitionTransaction } from '../src/domain/transactions.js';
import { createSso } from '../src/domain/ssos.js';
import { insertSignatures, upsertFieldValues } from '../src/storage/document-state.js';
import { inkPng } from './documents.js';
import { startHarness, type Harness } from './harness.js';
import { sessionBrowser, sessionPathOf, type SessionBrowser } from './session-pages.js';

const dir = mkdtempSync(join(tmpdir(), 'pal-completed-int-'));
let h: Harness;
let pages: SessionBrowser;
let claim: Uint8Array;

const FILE = 'documents/claim.pdf';
/** The download of the first document's completed PDF, from the page of session `cookie`. */
const download = (cookie: string, index: number | string = 0) =>
  `${sessionPathOf(cookie)}/documents/${index}/completed`;

async function claimPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([612, 792]);
  page.drawText('Expense claim', { x: 50, y: 740, size: 18 });
  doc
    .getForm()
    .createTextField('employee')
    .addToPage(page, { x: 50, y: 680, width: 250, height: 20 });
  return doc.save();
}

function writeClaimPal(folder: string): string {
  const pal = join(dir, folder, 'completion-pal');
  mkdirSync(join(pal, 'documents'), { recursive: true });
  mkdirSync(join(pal, 'workflows'), { recursive: true });
  writeFileSync(join(pal, FILE), claim);
  writeFileSync(
    join(pal, 'pal.json'),
    JSON.stringify({
      id: 'completion-pal',
      name: 'Completion test pal',
      modes: { transaction: true, web: true },
      workflows: { transaction: 'workflows/transaction.js' },
      documents: [
        {
          file: FILE,
          fields: [{ id: 'amount', type: 'TEXT', page: 1, x: 50, y: 200, width: 150, height: 20 }],
          signatures: [
            {
              id: 'employee-signature',
              role: 'participant',
              page: 1,
              x: 50,
              y: 300,
              customWidth: 200,
              customHeight: 60,
            },
          ],
        },
      ],
    }),
  );
  writeFileSync(
    join(pal, 'workflows', 'transaction.js'),
    `export function runWorkflow(input, pal) {
  if (input.values.step === 'approve') { pal.transaction.setStatus('APPROVED'); pal.transaction.complete(); }
  if (input.values.step === 'fetch') {
    const pdf = pal.documents.completed('${FILE}');
    return {
      messages: [{ message: pal.documents.list()[0].digest }],
      data: [{ name: 'pdf', value: pdf === null ? 'null' : pdf }],
    };
  }
  return { messages: [{ message: pal.transaction.systemStatus }] };
}
`,
  );
  return pal;
}

beforeAll(async () => {
  claim = await claimPdf();
  h = await startHarness();
  pages = sessionBrowser(h.url);
  await deployPal(h.domain, h.a.enterpriseId, writeClaimPal('a'));
  await deployPal(h.domain, h.b.enterpriseId, writeClaimPal('b'));
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

const step = (value: string) => ({ postData: [{ name: 'step', value }] });

/** A transaction of `tenant` with a participant, its value and signature kept, and a session. */
let signers = 0;
async function signedTransaction(tenant: 'a' | 'b') {
  const t = h[tenant];
  const n = ++signers;
  const sso = await createSso(h.domain, t.enterpriseId, {
    firstName: 'Erika',
    lastName: `Signer-${tenant}`,
    email: `erika-${tenant}-${n}@completion.test`,
  });
  const tx = await t.json.transactions.createTransaction({ palId: 'completion-pal' });
  const token = await t.json.transactions.createTransactionToken({
    transactionId: tx,
    userSSO: sso,
  });
  const { cookie } = await pages.enter(token);
  // What a successful run of the session page keeps (storage/document-state.ts).
  const now = new Date().toISOString();
  await upsertFieldValues(h.domain.db, { enterpriseId: t.enterpriseId, transactionId: tx, now }, [
    { file: FILE, fieldId: 'amount', value: `CHF 99.${tenant === 'a' ? '10' : '20'}` },
  ]);
  expect(
    await insertSignatures(h.domain.db, [
      {
        transaction_id: tx,
        file: FILE,
        signature_id: 'employee-signature',
        enterprise_id: t.enterpriseId,
        role: 'participant',
        sso_id: sso,
        kind: 'DRAWN',
        image: inkPng(300, 100),
        text: null,
        record_time: 1_764_000_000,
        signer_name: `Erika Signer-${tenant}`,
        signer_email: `erika-${tenant}-${n}@completion.test`,
        ip_address: '192.0.2.44',
        user_agent: 'Mozilla/5.0 Completion-Test',
      },
    ]),
  ).toBe(true);
  return { tx, cookie, enterpriseId: t.enterpriseId, client: t.json };
}

function pdftotext(pdf: Uint8Array): string {
  const file = join(dir, `download-${Date.now()}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', [file, '-']).toString('utf8').replace(/\s+/g, ' ');
}

describe('completed documents', () => {
  it('are written when the transaction completes, and downloaded from its own session only', async () => {
    const a = await signedTransaction('a');
    const b = await signedTransaction('b');

    // Before completion: nothing to download, no completed PDF, the deployed file's digest.
    const early = await pages.open(download(a.cookie), a.cookie);
    expect(early.status).toBe(404);
    expect(early.type).toBe('text/html; charset=utf-8');
    const deployedDigest = createHash('sha256').update(claim).digest('base64');
    const before = await a.client.transactions.runTransactionWorkflow({
      transactionId: a.tx,
      transactionContent: step('fetch'),
    });
    expect(before.messages?.[0]?.message).toBe(deployedDigest);
    expect(before.data).toEqual([{ name: 'pdf', value: 'null' }]);

    const run = await a.client.transactions.runTransactionWorkflow({
      transactionId: a.tx,
      transactionContent: step('approve'),
    });
    expect(run.messages?.[0]?.message).toBe('COMPLETED');

    // The harness waits for the outbox after each request: the completion job has run.
    const response = await fetch(h.url + download(a.cookie), { headers: { Cookie: a.cookie } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(
      'attachment; filename="claim-completed.pdf"',
    );
    expect(response.headers.get('cache-control')).toBe('no-store');
    const pdf = new Uint8Array(await response.arrayBuffer());
    const text = pdftotext(pdf);
    expect(text).toContain('CHF 99.10');
    expect(text).toContain('Evidence of signatures');
    expect(text).toContain('Erika Signer-a');
    expect(text).toContain('erika-a-1@completion.test');
    expect(text).toContain('192.0.2.44');
    expect(text).toContain('2025-11-24T16:00:00.000Z');
    expect(text).toContain(a.tx);
    expect(text).toContain(deployedDigest);
    expect(pdf).toEqual(await getCompletedDocument(h.domain, a.enterpriseId, a.tx, FILE));
    // The job again (a repeated delivery, or another node's after a lapsed lease): nothing new.
    const job = JSON.stringify({ enterpriseId: a.enterpriseId, transactionId: a.tx });
    expect(await runCompletionJob(h.domain, job)).toEqual({ ok: true, written: 0 });
    expect(await getCompletedDocument(h.domain, a.enterpriseId, a.tx, FILE)).toEqual(pdf);
    // A transaction of another enterprise named in a job: nothing (jobs are keyed by both).
    const foreign = JSON.stringify({ enterpriseId: b.enterpriseId, transactionId: a.tx });
    expect(await runCompletionJob(h.domain, foreign)).toEqual({ ok: true, written: 0 });

    // The workflow sees it, and the completed PDF's digest is the document's from now on.
    const after = await a.client.transactions.runTransactionWorkflow({
      transactionId: a.tx,
      transactionContent: step('fetch'),
    });
    expect(after.messages?.[0]?.message).toBe(createHash('sha256').update(pdf).digest('base64'));
    expect(after.data).toEqual([{ name: 'pdf', value: Buffer.from(pdf).toString('base64') }]);

    // Another enterprise's session: its own transaction is not completed, and it cannot name
    // another. An index past the documents, and a session-less request, get nothing either.
    expect((await pages.open(download(b.cookie), b.cookie)).status).toBe(404);
    expect(await getCompletedDocument(h.domain, b.enterpriseId, a.tx, FILE)).toBeUndefined();
    expect((await pages.open(download(a.cookie, 1), a.cookie)).status).toBe(404);
    expect((await pages.open(download(a.cookie, 'x'), a.cookie)).status).toBe(404);
    expect((await pages.open(download(a.cookie))).status).toBe(401);
  });

  it('are written anew when a reopened transaction completes again, with the values of then', async () => {
    const a = await signedTransaction('a');
    const approve = () =>
      a.client.transactions.runTransactionWorkflow({
        transactionId: a.tx,
        transactionContent: step('approve'),
      });
    await approve();
    expect(
      pdftotext((await getCompletedDocument(h.domain, a.enterpriseId, a.tx, FILE))!),
    ).toContain('CHF 99.10');
    await transitionTransaction(h.domain, a.enterpriseId, a.tx, 'reopen');
    await upsertFieldValues(
      h.domain.db,
      { enterpriseId: a.enterpriseId, transactionId: a.tx, now: new Date().toISOString() },
      [{ file: FILE, fieldId: 'amount', value: 'CHF 77.70' }],
    );
    await approve();
    const again = pdftotext((await getCompletedDocument(h.domain, a.enterpriseId, a.tx, FILE))!);
    expect(again).toContain('CHF 77.70');
    expect(again).not.toContain('CHF 99.10');
  });
});
