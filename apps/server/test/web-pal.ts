// A web-mode pal for the page tests (docs/web-mode.md): a two-page expense claim PDF written by
// pdf-lib, with a field of every type, a read-only field for the participant, three signatures
// (two for the participant, one for the owner) and the manifest's actions. Its `submit` keeps
// what it was given in a variable, so a test can check what the workflow received.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

const A4: [number, number] = [595, 842];

type Box = { x: number; y: number; width: number; height: number; page: number };

export const WEB_PAL_FIELDS: ({ id: string; type: string } & Box & Record<string, unknown>)[] = [
  {
    id: 'employeeName',
    type: 'TEXT',
    page: 1,
    x: 200,
    y: 120,
    width: 300,
    height: 22,
    roles: 'participant|owner',
  },
  {
    id: 'purpose',
    type: 'TEXTAREA',
    page: 1,
    x: 200,
    y: 160,
    width: 300,
    height: 80,
    roles: 'participant|owner',
  },
  {
    id: 'category',
    type: 'SELECT',
    page: 1,
    x: 200,
    y: 260,
    width: 150,
    height: 22,
    picklist: 'Travel|Meals|Other',
    roles: 'participant|owner',
  },
  {
    id: 'amount',
    type: 'TEXT',
    page: 1,
    x: 200,
    y: 300,
    width: 120,
    height: 22,
    value: '0.00',
    roles: 'participant|owner',
  },
  {
    id: 'paidBy',
    type: 'RADIO',
    page: 2,
    x: 200,
    y: 100,
    width: 150,
    height: 44,
    picklist: 'Card|Cash',
    roles: 'participant|owner',
  },
  {
    id: 'receiptsAttached',
    type: 'CHECKBOX',
    page: 2,
    x: 200,
    y: 170,
    width: 16,
    height: 16,
    roles: 'participant|owner',
  },
  {
    id: 'policyRead',
    type: 'CHECKBOXCHECKED',
    page: 2,
    x: 200,
    y: 200,
    width: 16,
    height: 16,
    roles: 'participant|owner',
  },
  {
    id: 'approvalNote',
    type: 'TEXT',
    page: 2,
    x: 200,
    y: 240,
    width: 300,
    height: 22,
    value: 'Waiting for the manager',
    roles: 'owner',
  },
];

export const WEB_PAL_SIGNATURES: ({ id: string; role: string; required: boolean } & Omit<
  Box,
  'width' | 'height'
> & {
    customWidth: number;
    customHeight: number;
  })[] = [
  {
    id: 'employee',
    role: 'participant',
    required: true,
    page: 2,
    x: 60,
    y: 320,
    customWidth: 220,
    customHeight: 70,
  },
  {
    id: 'witness',
    role: 'participant',
    required: false,
    page: 2,
    x: 320,
    y: 320,
    customWidth: 220,
    customHeight: 70,
  },
  {
    id: 'manager',
    role: 'owner',
    required: true,
    page: 2,
    x: 60,
    y: 450,
    customWidth: 220,
    customHeight: 70,
  },
];

const LABELS: Record<string, string> = {
  employeeName: 'Employee name',
  purpose: 'Purpose of the expense',
  category: 'Category',
  amount: 'Amount (EUR)',
  paidBy: 'Paid by',
  receiptsAttached: 'Receipts attached',
  policyRead: 'Policy read',
  approvalNote: 'Manager’s note',
};

/** The claim form: labels printed beside where each field and signature sits. */
export async function webClaimPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const pages = [doc.addPage(A4), doc.addPage(A4)];
  const text = (page: number, value: string, x: number, top: number, size = 11, f = font) =>
    pages[page - 1]!.drawText(value, { x, y: A4[1] - top - size, size, font: f });
  text(1, 'Expense claim', 60, 50, 22, bold);
  text(1, 'Fill in the claim, sign it on page 2, and submit it.', 60, 80, 11);
  text(2, 'Payment and signatures', 60, 50, 18, bold);
  for (const field of WEB_PAL_FIELDS) {
    text(field.page, LABELS[field.id]!, 60, field.y + 4);
    const page = pages[field.page - 1]!;
    page.drawRectangle({
      x: field.x,
      y: A4[1] - field.y - field.height,
      width: field.width,
      height: field.height,
      borderColor: rgb(0.6, 0.6, 0.6),
      borderWidth: 0.5,
    });
  }
  for (const s of WEB_PAL_SIGNATURES) {
    const page = pages[s.page - 1]!;
    page.drawLine({
      start: { x: s.x, y: A4[1] - s.y - s.customHeight },
      end: { x: s.x + s.customWidth, y: A4[1] - s.y - s.customHeight },
      thickness: 0.8,
    });
    text(
      s.page,
      `Signature of the ${s.role === 'owner' ? 'manager' : s.id}`,
      s.x,
      s.y + s.customHeight + 4,
      9,
    );
  }
  return doc.save();
}

export const WEB_PAL_ID = 'web-claim';

const WORKFLOW = `// The claim's workflow: keeps what the page sent, and answers.
export function submit(input, pal) {
  pal.vars.set('input', JSON.stringify({ values: input.values, signatures: input.signatures }));
  pal.transaction.setStatus('SUBMITTED');
  return {
    messages: [
      { message: 'Claim of ' + input.values.employeeName + ' received with ' + input.signatures.length + ' signature(s).' },
    ],
  };
}

export function save(input, pal) {
  pal.vars.set('saved', JSON.stringify(input.values));
  return { messages: [{ message: 'Saved for later.' }] };
}

export function fail(input, pal) {
  throw new Error('The claim system is down');
}
`;

/** Writes the pal folder under `dir` and returns its path. */
export async function writeWebPal(dir: string): Promise<string> {
  const folder = join(dir, WEB_PAL_ID);
  mkdirSync(join(folder, 'documents'), { recursive: true });
  mkdirSync(join(folder, 'workflows'), { recursive: true });
  writeFileSync(join(folder, 'documents', 'claim.pdf'), await webClaimPdf());
  writeFileSync(join(folder, 'workflows', 'transaction.js'), WORKFLOW);
  const manifest = {
    id: WEB_PAL_ID,
    name: 'Expense claim',
    description: 'An employee claims an expense and signs; a manager approves.',
    modes: { transaction: true, web: true },
    workflows: { transaction: 'workflows/transaction.js' },
    documents: [
      {
        file: 'documents/claim.pdf',
        description: 'Expense claim form',
        fields: WEB_PAL_FIELDS,
        signatures: WEB_PAL_SIGNATURES,
      },
    ],
    actions: {
      transaction: [
        { name: 'submit', label: 'Submit the claim', roles: 'participant', statuses: 'NEW' },
        { name: 'save', label: 'Save for later', roles: 'participant|owner' },
        { name: 'fail', label: 'Try a failing run', roles: 'participant', statuses: 'NEW' },
      ],
    },
  };
  writeFileSync(join(folder, 'pal.json'), JSON.stringify(manifest, null, 2));
  return folder;
}
