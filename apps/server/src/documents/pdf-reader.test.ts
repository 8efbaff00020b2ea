import { PDFDocument, PDFHexString, PDFName, PDFNumber, type PDFObject } from 'pdf-lib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { blankPdf, claimFormPdf, encryptedPdf } from '../../test/documents.js';
import { inspectPdf } from './pdf-inspection.js';
import { readPdf } from './pdf-reader.js';

/** A valid one-page PDF followed by `count` objects of sixteen numbers each. */
function objectBomb(count: number): Buffer {
  const parts = [
    '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n',
    '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n',
    '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >> endobj\n',
  ];
  const numbers = `[${Array.from({ length: 16 }, (_, i) => i).join(' ')}]`;
  for (let i = 4; i < count + 4; i++) parts.push(`${i} 0 obj ${numbers} endobj\n`);
  parts.push('trailer << /Root 1 0 R >>\n%%EOF\n');
  return Buffer.from(parts.join(''));
}

describe('readPdf', () => {
  // pdf-lib tells of the objects it skips on the console (the worker keeps that to itself).
  beforeEach(() => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('reads the pages as displayed and the form fields a person fills, from the top-left corner', async () => {
    const reading = await readPdf(await claimFormPdf());
    expect(reading).toEqual({
      ok: true,
      facts: {
        pages: [
          { width: 612, height: 792 },
          { width: 595.28, height: 841.89 },
          { width: 792, height: 612 }, // /Rotate 90
        ],
        formFields: [
          // PDF y 700..720 on a 792-point page: 72 from the top.
          {
            id: 'applicant.name',
            type: 'TEXT',
            value: 'Ada Lovelace',
            page: 1,
            rect: { x: 50, y: 72, width: 200, height: 20 },
            label: 'Full name',
          },
          {
            id: 'country',
            type: 'SELECT',
            options: ['CH', 'DE', 'FR'],
            value: 'DE',
            page: 1,
            rect: { x: 300, y: 72, width: 100, height: 20 },
          },
          // Read-only `office` and hidden `internal` are left out. A4: 841.89 - 200 = 641.89.
          {
            id: 'notes',
            type: 'TEXTAREA',
            page: 2,
            rect: { x: 50, y: 642, width: 300, height: 100 },
            // White space collapsed; a name of only white space is none.
            label: 'Notes for the reviewer – optional',
          },
          {
            id: 'agree',
            type: 'CHECKBOXCHECKED',
            page: 2,
            rect: { x: 50, y: 527, width: 15, height: 15 },
          },
          {
            id: 'newsletter',
            type: 'CHECKBOX',
            page: 2,
            rect: { x: 100, y: 527, width: 15, height: 15 },
          },
          // Turned a quarter clockwise: PDF x becomes distance from the top, PDF y from the left;
          // one box around both buttons.
          {
            id: 'kind',
            type: 'RADIO',
            options: ['Travel', 'Meals'],
            value: 'Meals',
            page: 3,
            rect: { x: 500, y: 50, width: 15, height: 65 },
          },
        ],
      },
    });
  });

  it("reads a field's alternate name in each encoding a PDF writes, and only the start of a long one", async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const page = doc.addPage([612, 792]);
    const names: [string, PDFObject][] = [
      // PDF 2.0: UTF-8 after its byte order mark (pdf-lib's decodeText reads it as PDFDocEncoding).
      ['utf8', PDFHexString.of(Buffer.from('\ufeffStraße ✓', 'utf8').toString('hex'))],
      ['utf16', PDFHexString.fromText('Ünïcode 16')],
      ['long', PDFHexString.fromText('Ä'.repeat(100_000))],
      ['number', PDFNumber.of(7)],
    ];
    names.forEach(([id, name], i) => {
      const field = doc.getForm().createTextField(id);
      field.addToPage(page, { x: 50, y: 700 - i * 40, width: 100, height: 20, borderWidth: 0 });
      field.acroField.dict.set(PDFName.of('TU'), name);
    });
    const reading = await readPdf(await doc.save());
    if (!reading.ok) throw new Error(reading.detail);
    const labels = Object.fromEntries(reading.facts.formFields.map((f) => [f.id, f.label]));
    expect(labels).toEqual({
      utf8: 'Straße ✓',
      utf16: 'Ünïcode 16',
      // Its first 4,003 bytes: the mark and 2,000 characters (the domain keeps 200).
      long: 'Ä'.repeat(2000),
      number: undefined,
    });
  });

  it('refuses an encrypted PDF, whether it needs a password to open or only restricts', async () => {
    expect(await readPdf(encryptedPdf('encrypted-aes256'))).toEqual({
      ok: false,
      problem: 'encrypted',
      detail: '',
    });
    expect(await readPdf(encryptedPdf('encrypted-restricted'))).toMatchObject({
      problem: 'encrypted',
    });
  });

  it('refuses what is not a whole PDF: other bytes, a truncated file, a PDF without pages', async () => {
    const form = await claimFormPdf();
    expect(await readPdf(new TextEncoder().encode('hello, not a PDF'))).toMatchObject({
      ok: false,
      problem: 'damaged',
      detail: expect.stringContaining('No PDF header'),
    });
    expect(await readPdf(form.subarray(0, Math.floor(form.length / 3)))).toMatchObject({
      ok: false,
      problem: 'damaged',
    });
    const empty = await PDFDocument.create();
    expect(await readPdf(await empty.save({ addDefaultPage: false }))).toEqual({
      ok: false,
      problem: 'damaged',
      detail: 'it has no pages',
    });
  });
});

describe('inspectPdf (in a worker thread)', () => {
  it('answers as readPdf does', async () => {
    const bytes = await claimFormPdf();
    expect(await inspectPdf(bytes)).toEqual(await readPdf(bytes));
    expect(await inspectPdf(encryptedPdf('encrypted-aes256'))).toMatchObject({
      problem: 'encrypted',
    });
  });

  it('stops a reading that takes too long or too much memory, as an answer about the file', async () => {
    const bytes = await blankPdf([612, 792]);
    expect(await inspectPdf(bytes, { memoryMb: 1024, timeoutMs: 1 })).toEqual({
      ok: false,
      problem: 'too-costly',
      detail: 'reading it took longer than 0.001 s',
    });
    // 6 MB of small arrays, which pdf-lib holds as objects many times their size.
    expect(await inspectPdf(objectBomb(100_000), { memoryMb: 64, timeoutMs: 60_000 })).toEqual({
      ok: false,
      problem: 'too-costly',
      detail: 'reading it needed more than 64 MB of memory',
    });
  });
});
