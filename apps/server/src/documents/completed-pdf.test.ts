// The completed PDF checked with readers nobody here wrote: poppler's pdftotext, pdfinfo and
// pdftoppm (Debian's poppler-utils, which .ci/run installs). The values and the evidence must be
// in the text, the form gone, and each signature box inked where a signature was given.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Wire from '@pal-workflow/types';
import { FieldType } from '@pal-workflow/types';
import { PDFDocument, PDFName, degrees } from 'pdf-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { inkPng } from '../../test/documents.js';
import {
  composeCompletedPdf,
  type CompletionInput,
  type SignatureToDraw,
} from './completed-pdf.js';
import { writeCompletedPdf } from './completion.js';
import type { Rect } from './page-geometry.js';

const dir = mkdtempSync(join(tmpdir(), 'pal-completed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;

function save(pdf: Uint8Array): string {
  const file = join(dir, `doc-${++fileNo}.pdf`);
  writeFileSync(file, pdf);
  return file;
}

function pdftotext(pdf: Uint8Array, page?: number): string {
  const range = page ? ['-f', String(page), '-l', String(page)] : [];
  return execFileSync('pdftotext', [...range, '-layout', save(pdf), '-']).toString('utf8');
}

/** The words of a page as pdftotext sets them, each with its box (displayed page, from the top-left). */
function wordsOf(pdf: Uint8Array, page: number): (Rect & { text: string })[] {
  const html = execFileSync('pdftotext', [
    ...['-f', String(page), '-l', String(page), '-bbox'],
    save(pdf),
    '-',
  ]).toString('utf8');
  return [
    ...html.matchAll(
      /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g,
    ),
  ].map(([, x0, y0, x1, y1, text]) => ({
    x: Number(x0),
    y: Number(y0),
    width: Number(x1) - Number(x0),
    height: Number(y1) - Number(y0),
    text: text!
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"'),
  }));
}

/**
 * The words pdftotext finds on page 1 in and around `box` (the page as shown), each checked to lie
 * inside it: a reader clips what does not, and pdftotext would still read it.
 */
function wordsInside(pdf: Uint8Array, box: Rect): string[] {
  const words = wordsOf(pdf, 1).filter(
    (w) =>
      w.x > box.x - 1 &&
      w.x < box.x + box.width &&
      w.y > box.y - 20 &&
      w.y < box.y + box.height + 20,
  );
  for (const w of words) {
    expect(w.x + w.width, w.text).toBeLessThanOrEqual(box.x + box.width + 0.5);
    expect(w.y + w.height, w.text).toBeLessThanOrEqual(box.y + box.height + 0.5);
    expect(w.y, w.text).toBeGreaterThanOrEqual(box.y - 0.5);
  }
  return words.map((w) => w.text);
}

/**
 * The claim with a multi-line field "notes" of the PDF's own in `box` (the page as shown, 792 pt
 * tall), which the manifest places where the widget is.
 */
async function claimWithNotes(box: Rect): Promise<CompletionInput> {
  const doc = await PDFDocument.load((await claimInput()).pdf);
  const notes = doc.getForm().createTextField('notes');
  notes.enableMultiline();
  notes.addToPage(doc.getPage(0), { ...box, y: 792 - box.y - box.height });
  const input = { ...(await claimInput()), pdf: await doc.save() };
  input.fields = [
    ...input.fields,
    { id: 'notes', type: FieldType.TEXTAREA, page: 1, ...box, palDefined: false },
  ];
  return input;
}

/** pdfinfo's facts, and under `errors` what it complained of (a damaged cross-reference table). */
function pdfinfo(pdf: Uint8Array): Record<string, string> {
  const run = spawnSync('pdfinfo', [save(pdf)], { encoding: 'utf8' });
  const out = run.stdout;
  return Object.fromEntries([
    ['errors', run.stderr.trim()],
    ...out
      .split('\n')
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  ]);
}

/** How many dark pixels the box (displayed page, points from the top-left) holds at 72 dpi. */
function darkPixels(pdf: Uint8Array, page: number, box: Rect): number {
  const prefix = join(dir, `render-${++fileNo}`);
  execFileSync('pdftoppm', [
    '-r',
    '72',
    '-cropbox',
    '-gray',
    '-f',
    String(page),
    '-l',
    String(page),
    '-singlefile',
    save(pdf),
    prefix,
  ]);
  const pgm = readFileSync(`${prefix}.pgm`);
  const [, w, h] = pgm.toString('latin1', 0, 32).split(/\s+/).map(Number);
  const pixels = pgm.subarray(pgm.length - w * h);
  let dark = 0;
  for (let y = box.y; y < box.y + box.height && y < h; y++)
    for (let x = box.x; x < box.x + box.width && x < w; x++) if (pixels[y * w + x] < 128) dark++;
  return dark;
}

const digest = (pdf: Uint8Array) => createHash('sha256').update(pdf).digest('base64');

/** One page, US Letter: an AcroForm text field `employee` and check box `receipts`. */
async function onePageForm(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([612, 792]);
  page.drawText('Expense claim', { x: 50, y: 740, size: 18 });
  const form = doc.getForm();
  form.createTextField('employee').addToPage(page, { x: 50, y: 680, width: 250, height: 20 });
  form.createCheckBox('receipts').addToPage(page, { x: 50, y: 640, width: 14, height: 14 });
  return doc.save();
}

/** Ten pages, page 3 turned a quarter clockwise, no form. */
async function tenPages(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  for (let n = 1; n <= 10; n++) {
    const page = doc.addPage([595.28, 841.89]);
    if (n === 3) page.setRotation(degrees(90));
    page.drawText(`Terms, page ${n}`, { x: 50, y: 800, size: 12 });
  }
  return doc.save();
}

function signature(
  id: string,
  role: string,
  kind: 'DRAWN' | 'TYPED',
  who: { name: string; email: string; ip: string },
  recordTime: number,
): SignatureToDraw {
  return {
    id,
    role,
    sso: `sso-${role}`,
    kind,
    ...(kind === 'DRAWN' ? { image: inkPng(300, 100).toString('base64') } : { text: who.name }),
    recordTime,
    evidence: {
      name: who.name,
      email: who.email,
      ipAddress: who.ip,
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Test/1.0',
    },
  };
}

const employeeBox = { page: 1, x: 50, y: 300, customWidth: 200, customHeight: 60 };
const managerBox = { page: 1, x: 320, y: 300, customWidth: 200, customHeight: 60 };

async function claimInput(): Promise<CompletionInput> {
  const pdf = await onePageForm();
  const fields: Wire.Field[] = [
    {
      id: 'employee',
      type: FieldType.TEXT,
      page: 1,
      x: 50,
      y: 92,
      width: 250,
      height: 20,
      palDefined: false,
    },
    {
      id: 'receipts',
      type: FieldType.CHECKBOX,
      page: 1,
      x: 50,
      y: 138,
      width: 14,
      height: 14,
      palDefined: false,
    },
    {
      id: 'amount',
      type: FieldType.TEXT,
      page: 1,
      x: 50,
      y: 200,
      width: 150,
      height: 20,
      palDefined: true,
    },
    {
      id: 'purpose',
      type: FieldType.TEXTAREA,
      page: 1,
      x: 50,
      y: 230,
      width: 400,
      height: 50,
      palDefined: true,
    },
    {
      id: 'approved',
      type: FieldType.CHECKBOX,
      page: 1,
      x: 400,
      y: 200,
      width: 16,
      height: 16,
      palDefined: true,
    },
  ];
  return {
    pdf,
    file: 'documents/claim.pdf',
    digest: digest(pdf),
    fields,
    signatures: [
      {
        id: 'employee-signature',
        role: 'participant',
        required: true,
        recordTime: 0,
        ...employeeBox,
      },
      { id: 'manager-signature', role: 'manager', required: true, recordTime: 0, ...managerBox },
    ],
    values: {
      employee: 'Zoë Ångström',
      receipts: 'true',
      amount: 'CHF 1234.50',
      purpose: 'Conference travel to Basel, two nights',
      approved: 'true',
    },
    given: [
      signature(
        'employee-signature',
        'participant',
        'DRAWN',
        { name: 'Zoë Ångström', email: 'zoe@example.org', ip: '192.0.2.10' },
        1_764_000_000,
      ),
      signature(
        'manager-signature',
        'manager',
        'TYPED',
        { name: 'Max Muster', email: 'max@example.org', ip: '2001:db8::7' },
        1_764_003_600,
      ),
    ],
    transactionId: 'cM9tW1Hq3sK0f7u2Yd4ZrA',
    completedAt: '2025-11-24T17:00:00.000Z',
  };
}

async function compose(input: CompletionInput): Promise<Uint8Array> {
  const result = await composeCompletedPdf(input);
  if (!result.ok) throw new Error(result.detail);
  return result.pdf;
}

const boxOf = (s: { x: number; y: number; customWidth: number; customHeight: number }): Rect => ({
  x: s.x,
  y: s.y,
  width: s.customWidth,
  height: s.customHeight,
});

describe('the completed PDF', () => {
  it('holds the values, the evidence and both signatures, with the form flattened', async () => {
    const input = await claimInput();
    const pdf = await compose(input);

    const info = pdfinfo(pdf);
    expect(info.errors).toBe('');
    expect(info.Pages).toBe('2');
    expect(info.Form).toBe('none');
    expect((await PDFDocument.load(pdf)).getForm().getFields()).toEqual([]);

    const first = pdftotext(pdf, 1);
    expect(first).toContain('Zoë Ångström');
    expect(first).toContain('CHF 1234.50');
    expect(first).toContain('Conference travel to Basel, two nights');
    expect(first).toContain('Max Muster'); // the typed signature

    const evidence = pdftotext(pdf, 2).replace(/\s+/g, ' ');
    for (const text of [
      'Evidence of signatures',
      'Zoë Ångström',
      'zoe@example.org',
      '192.0.2.10',
      '2025-11-24T16:00:00.000Z',
      'Max Muster',
      'max@example.org',
      '2001:db8::7',
      '2025-11-24T17:00:00.000Z',
      'Mozilla/5.0 (X11; Linux x86_64) Test/1.0',
      'role participant',
      'role manager',
      input.digest,
      Buffer.from(input.digest, 'base64').toString('hex'),
      input.transactionId,
    ]) {
      expect(evidence).toContain(text);
    }

    for (const box of [employeeBox, managerBox]) {
      expect(darkPixels(input.pdf, 1, boxOf(box))).toBe(0);
      expect(darkPixels(pdf, 1, boxOf(box))).toBeGreaterThan(100);
    }
    // Both check boxes ticked: the PDF's own (flattened) and the manifest's (drawn).
    const receipts = { x: 50, y: 138, width: 14, height: 14 };
    const approved = { x: 400, y: 200, width: 16, height: 16 };
    expect(darkPixels(pdf, 1, approved)).toBeGreaterThan(darkPixels(input.pdf, 1, approved) + 5);
    expect(darkPixels(pdf, 1, receipts)).toBeGreaterThan(darkPixels(input.pdf, 1, receipts) + 5);
  });

  it("keeps every line a browser posted (CRLF) of a multi-line field, the PDF's own and a drawn one; text that cannot fit is marked cut", async () => {
    // The demo's "What was bought, and why": a multi-line field of the PDF's own, 90 pt tall.
    const input = await claimWithNotes({ x: 50, y: 322, width: 250, height: 90 });
    const six = ['one', 'two', 'three', 'four', 'five', 'six'].map((n) => `Line ${n}`);
    input.values.notes = six.join('\r\n');
    input.values.purpose = six.slice(0, 3).join('\r\n'); // the manifest's, 50 pt tall
    const text = pdftotext(await compose(input), 1);
    for (const line of six) expect(text).toContain(line);

    const many = Array.from({ length: 60 }, (_, i) => `Item ${i + 1}`);
    input.values.notes = many.join('\r\n');
    input.values.purpose = many.join('\r\n');
    const cut = pdftotext(await compose(input), 1);
    expect(cut).toMatch(/Item 1(?!\d)/);
    expect(cut).not.toContain('Item 60');
    expect(cut.match(/Item \d+\.\.\./g)).toHaveLength(2);
  });

  it("sets a multi-line field's lines inside its box, DejaVu text too; a word wider than the box is broken, not clipped", async () => {
    // Shown 50 to 300 across, 322 to 412 down; the manifest's purpose 50 to 450, 230 to 280.
    const notesBox = { x: 50, y: 322, width: 250, height: 90 };
    const input = await claimWithNotes(notesBox);
    const purposeBox = { x: 50, y: 230, width: 400, height: 50 };
    const inside = wordsInside;

    // Seven lines of Polish: DejaVu's lines are taller than Helvetica's.
    const seven = Array.from({ length: 7 }, (_, i) => `Łódź wiersz ${i + 1}`);
    input.values.notes = seven.join('\r\n');
    const polish = await compose(input);
    expect(inside(polish, notesBox).join(' ')).toBe(seven.join(' '));

    // A word wider than either box: every character kept, on lines of the box's width.
    const long = `IBAN ${'PL61109010140000071219812874'.repeat(6)} end`;
    input.values.notes = long;
    input.values.purpose = long;
    const broken = await compose(input);
    expect(inside(broken, notesBox).join('')).toBe(long.replace(/ /g, ''));
    expect(inside(broken, purposeBox).join('')).toBe(long.replace(/ /g, ''));

    // More than fits at the least size, and no space in it: cut with "...", inside the box.
    input.values.notes = 'ł'.repeat(5000);
    input.values.purpose = 'ł'.repeat(5000);
    const cut = await compose(input);
    for (const box of [notesBox, purposeBox]) {
      const words = inside(cut, box);
      expect(words.at(-1)).toMatch(/^ł+\.\.\.$/);
      expect(words.slice(0, -1).every((w) => /^ł+$/.test(w))).toBe(true);
    }
  });

  it("keeps a PDF field's lines inside its box where Helvetica's kerning widens them, and a tab in a one-line field in its field", async () => {
    const notesBox = { x: 50, y: 322, width: 210, height: 50 };
    const input = await claimWithNotes(notesBox);
    // pdf-lib breaks lines by kerned widths, and "rt" kerns wider.
    const words = Array.from({ length: 18 }, () => 'rtrtrtrtrt');
    input.values.notes = words.join(' ');
    // Put where no widget is: a value drawn there would mean the form was given up.
    input.fields = input.fields.map((f) => (f.id === 'employee' ? { ...f, y: 600 } : f));
    input.values.employee = 'Hello\tworld';
    const pdf = await compose(input);
    const shown = wordsInside(pdf, notesBox);
    const cut = shown.at(-1)!.endsWith('...');
    const whole = cut ? shown.slice(0, -1) : shown;
    expect(whole).toEqual(words.slice(0, whole.length));
    if (!cut) expect(shown).toEqual(words);
    expect(wordsInside(pdf, { x: 50, y: 92, width: 250, height: 20 })).toEqual(['Hello', 'world']);
  });

  it('sets a one-line field of the PDF\'s own smaller until its value fits, and cuts it with "..." past 6 pt', async () => {
    const input = await claimInput();
    // 'employee': shown 50 to 300 across, 92 to 112 down.
    const box = { x: 50, y: 92, width: 250, height: 20 };
    const onLine = (pdf: Uint8Array) =>
      wordsOf(pdf, 1).filter((w) => w.y > box.y - 5 && w.y < box.y + box.height);
    input.values.employee = 'Maximiliane Katharina Wilhelmine von Hohenzollern-Sigmaringen';
    const smaller = onLine(await compose(input));
    expect(smaller.map((w) => w.text).join(' ')).toBe(input.values.employee);
    input.values.employee = 'word '.repeat(200).trim();
    const cut = onLine(await compose(input));
    expect(cut.at(-1)!.text).toMatch(/^(w|wo|wor|word)?\.\.\.$/);
    for (const w of cut) expect(w.x + w.width).toBeLessThanOrEqual(box.x + box.width + 0.5);
    expect(cut.length).toBeGreaterThan(12); // at 6 pt, not at 4
  });

  it('writes names and values beyond Windows-1252 as they are (DejaVu), in fields, signatures and evidence', async () => {
    const input = await claimInput();
    const polish = 'Łukasz Żółć';
    input.values.employee = polish; // the PDF's own form field, flattened
    input.values.purpose = 'Командировка → Αθήνα ✓'; // a field the manifest places, drawn
    input.given[0]!.evidence.name = polish;
    input.given[1] = { ...input.given[1]!, text: 'Ørjan Đorđević' };
    input.given[1].evidence.name = 'Ørjan Đorđević';
    const pdf = await compose(input);
    expect(pdfinfo(pdf).errors).toBe('');
    const first = pdftotext(pdf, 1);
    for (const text of [polish, 'Командировка → Αθήνα ✓', 'Ørjan Đorđević'])
      expect(first).toContain(text);
    const evidence = pdftotext(pdf, 2).replace(/\s+/g, ' ');
    expect(evidence).toContain(`Signer: ${polish}`);
    expect(evidence).toContain('How: typed as "Ørjan Đorđević"');
    expect(evidence).not.toContain('?');
    // Embedded beside the standard fonts, as subsets of the glyphs used (DejaVuSans.ttf alone is
    // 757 KB).
    const fonts = execFileSync('pdffonts', [save(pdf)]).toString('utf8');
    expect(fonts).toMatch(/DejaVuSans-\d+ +CID TrueType/);
    expect(fonts).toMatch(/DejaVuSerif-Italic-\d+ +CID TrueType/);
    expect(fonts).toContain('Helvetica-Bold');
    expect(pdf.length).toBeLessThan(input.pdf.length + 120_000);
  });

  it('writes Hebrew and Arabic right to left with the numbers and Latin words in them left to right', async () => {
    const input = await claimInput();
    input.values.employee = 'מגדל 12345 בע"מ'; // the PDF's own form field, flattened
    input.values.amount = 'شارع 2024 القاهرة'; // a one-line field the manifest places, drawn
    input.values.purpose = 'רחוב הרצל 12345\nסכום 12.50 CHF (מאושר)\nHauptstr. 12345 Zürich'; // wrapped
    input.given[1] = { ...input.given[1]!, text: 'דוד 2 לוי' };
    input.given[1].evidence.name = 'דוד 2 לוי';
    const pdf = await compose(input);
    expect(pdfinfo(pdf).errors).toBe('');
    // As shown, left to right (pdftotext's words, each glyph in the order drawn): the number
    // reads 12345 at the left end of the Hebrew line, the Hebrew words are shown reversed.
    const lineAt = (y: number) =>
      wordsOf(pdf, 1)
        .filter((w) => Math.abs(w.y + w.height / 2 - y) < 6)
        .sort((a, b) => a.x - b.x)
        .map((w) => w.text)
        .join(' ');
    const shown = (logical: string) => [...logical].reverse().join('');
    expect(lineAt(92 + 10)).toBe(`${shown('בע"מ')} 12345 ${shown('מגדל')}`);
    expect(lineAt(200 + 10)).toBe(`${shown('القاهرة')} 2024 ${shown('شارع')}`);
    const purpose = wordsOf(pdf, 1).filter((w) => w.y > 230 && w.y < 280);
    const rows = [...new Set(purpose.map((w) => Math.round(w.y)))].sort((a, b) => a - b);
    const row = (n: number) =>
      purpose
        .filter((w) => Math.round(w.y) === rows[n])
        .sort((a, b) => a.x - b.x)
        .map((w) => w.text)
        .join(' ');
    expect(row(0)).toBe(`12345 ${shown('הרצל')} ${shown('רחוב')}`);
    // A number and a Latin word inside right-to-left text are runs of their own, read from the
    // right as the sentence is (12.50 first, then CHF: rule L2, as a browser shows it); the
    // brackets are mirrored.
    expect(row(1)).toBe(`(${shown('מאושר')}) CHF 12.50 ${shown('סכום')}`);
    expect(row(2)).toBe('Hauptstr. 12345 Zürich');
    const signed = wordsInside(pdf, boxOf(managerBox));
    expect(signed.join(' ')).toBe(`${shown('לוי')} 2 ${shown('דוד')}`);
    // The evidence page: a Hebrew name inside a Latin line.
    const evidence = wordsOf(pdf, 2)
      .map((w) => w.text)
      .join(' ');
    expect(evidence).toContain(`Signer: ${shown('לוי')} 2 ${shown('דוד')}`);
  });

  it("sets a right-to-left value from its box's right edge, and a wrapped line in its paragraph's direction", async () => {
    // The PDF's own multi-line field, and the manifest's drawn one, each 60 pt wide inside: the
    // paragraph breaks after its long first word, and its second line begins with a Latin word.
    const notesBox = { x: 50, y: 400, width: 68, height: 90 };
    const input = await claimWithNotes(notesBox);
    const purposeBox = { x: 350, y: 400, width: 64, height: 90 };
    input.fields = input.fields.map((f) => (f.id === 'purpose' ? { ...f, ...purposeBox } : f));
    const paragraph = 'אבגדהוזחטי Acme כן';
    input.values.notes = paragraph;
    input.values.purpose = paragraph;
    input.values.employee = 'מגדל 12345'; // the PDF's own one-line field, 50 to 300 across
    input.values.amount = 'Hauptstr. 12'; // left to right, as before
    const pdf = await compose(input);
    const shown = (logical: string) => [...logical].reverse().join('');
    const rowsIn = (box: Rect) => {
      const words = wordsOf(pdf, 1).filter(
        (w) =>
          w.x >= box.x - 1 && w.x < box.x + box.width && w.y > box.y && w.y < box.y + box.height,
      );
      const ys = [...new Set(words.map((w) => Math.round(w.y)))].sort((a, b) => a - b);
      return ys.map((y) => words.filter((w) => Math.round(w.y) === y).sort((a, b) => a.x - b.x));
    };
    for (const box of [notesBox, purposeBox]) {
      const rows = rowsIn(box);
      // Read from the right, as the paragraph is: "Acme" first, then the Hebrew word.
      expect(rows.at(-1)!.map((w) => w.text)).toEqual([shown('כן'), 'Acme']);
      expect(rows.slice(0, -1).flatMap((row) => row.map((w) => w.text))).toEqual(
        rows.length === 2 ? [shown('אבגדהוזחטי')] : [shown('אבגדהוז'), shown('חטי')],
      );
      // Every line ends at the box's right edge, less its padding; the shortest starts well
      // inside it.
      const ends = rows.map((row) => row.at(-1)!.x + row.at(-1)!.width);
      for (const end of ends) {
        expect(end).toBeLessThanOrEqual(box.x + box.width);
        expect(end).toBeGreaterThan(box.x + box.width - 5);
      }
      expect(Math.max(...rows.map((row) => row[0]!.x))).toBeGreaterThan(box.x + 20);
    }
    const employee = rowsIn({ x: 50, y: 92, width: 250, height: 20 })[0]!;
    expect(employee.map((w) => w.text).join(' ')).toBe(`12345 ${shown('מגדל')}`);
    expect(300 - (employee.at(-1)!.x + employee.at(-1)!.width)).toBeLessThan(8);
    const amount = rowsIn({ x: 50, y: 200, width: 150, height: 20 })[0]!;
    expect(amount[0]!.x - 50).toBeLessThan(4);
  });

  it('writes a typed signature DejaVu Serif Italic lacks (Arabic) in DejaVu Sans, not as "?"', async () => {
    const input = await claimInput();
    const name = 'محمد بن سلمان';
    input.given[1] = { ...input.given[1]!, text: name };
    input.given[1].evidence.name = name;
    const pdf = await compose(input);
    const signed = wordsInside(pdf, boxOf(managerBox)).join(' ');
    expect(signed).not.toContain('?');
    expect(signed).toBe(
      name
        .split(' ')
        .reverse()
        .map((w) => [...w].reverse().join(''))
        .join(' '),
    );
    expect(darkPixels(pdf, 1, boxOf(managerBox))).toBeGreaterThan(100);
  });

  it('keeps a typed signature of 201 characters inside its box, cut with "..." at 4 pt', async () => {
    const input = await claimInput();
    const name = 'Maximiliane Alexandra Konstantina '.repeat(7).slice(0, 201);
    input.given[1] = { ...input.given[1]!, text: name };
    input.given[1].evidence.name = name;
    const pdf = await compose(input);
    const box = boxOf(managerBox);
    const words = wordsOf(pdf, 1).filter((w) => w.y > box.y - 20 && w.y < box.y + box.height);
    expect(words.length).toBeGreaterThan(3);
    for (const w of words) {
      expect(w.x, w.text).toBeGreaterThanOrEqual(box.x);
      expect(w.x + w.width, w.text).toBeLessThanOrEqual(box.x + box.width);
    }
    expect(words.at(-1)!.text).toMatch(/\.\.\.$/);
    // Nothing drawn beside the box: between it and the employee's box, nor right of it.
    expect(darkPixels(pdf, 1, { x: 252, y: box.y, width: 66, height: box.height })).toBe(0);
    expect(darkPixels(pdf, 1, { x: 522, y: box.y, width: 90, height: box.height })).toBe(0);
    expect(darkPixels(pdf, 1, box)).toBeGreaterThan(0); // 4 pt ink at 72 dpi is mostly grey
  });

  it('embeds no other font when Windows-1252 writes every text; a character DejaVu lacks is "?"', async () => {
    const input = await claimInput();
    expect(execFileSync('pdffonts', [save(await compose(input))]).toString('utf8')).not.toContain(
      'DejaVu',
    );
    input.values.purpose = 'Reise nach 北京';
    expect(pdftotext(await compose(input), 1)).toContain('Reise nach ??');
  });

  it('leaves a box blank when its signature was not given, and an unchecked box unticked', async () => {
    const input = await claimInput();
    input.given = input.given.filter((g) => g.id !== 'manager-signature');
    input.values.approved = 'false';
    const pdf = await compose(input);
    expect(darkPixels(pdf, 1, boxOf(managerBox))).toBe(0);
    expect(darkPixels(pdf, 1, boxOf(employeeBox))).toBeGreaterThan(100);
    expect(darkPixels(pdf, 1, { x: 400, y: 200, width: 16, height: 16 })).toBe(0);
    expect(pdftotext(pdf, 2)).not.toContain('max@example.org');
  });

  it('draws on the right page of ten, upright on a turned page, in a worker', async () => {
    const pdf = await tenPages();
    const onSeven = { page: 7, x: 300, y: 600, customWidth: 220, customHeight: 70 };
    // Page 3 is shown 841.89 wide and 595.28 high.
    const onThree = { page: 3, x: 500, y: 400, customWidth: 250, customHeight: 80 };
    const who = { name: 'Erika Mustermann', email: 'erika@example.org', ip: '198.51.100.3' };
    const result = await writeCompletedPdf({
      pdf,
      file: 'documents/terms.pdf',
      digest: digest(pdf),
      fields: [
        {
          id: 'company',
          type: FieldType.TEXT,
          page: 3,
          x: 100,
          y: 100,
          width: 300,
          height: 24,
          palDefined: true,
        },
      ],
      signatures: [
        { id: 'drawn', role: 'owner', required: true, recordTime: 0, ...onSeven },
        { id: 'typed', role: 'owner', required: true, recordTime: 0, ...onThree },
      ],
      values: { company: 'Muster Holding AG' },
      given: [
        signature('drawn', 'owner', 'DRAWN', who, 1_764_000_000),
        signature('typed', 'owner', 'TYPED', who, 1_764_000_060),
      ],
      transactionId: 'tx-ten-pages',
      completedAt: '2025-11-24T17:00:00.000Z',
    });
    if (!result.ok) throw new Error(result.detail);
    const out = result.pdf;
    expect(pdfinfo(out).Pages).toBe('11');
    for (const page of [3, 7]) {
      const box = page === 3 ? onThree : onSeven;
      expect(darkPixels(pdf, page, boxOf(box))).toBe(0);
      expect(darkPixels(out, page, boxOf(box))).toBeGreaterThan(100);
      // Nothing lands on the other signature's page at this place.
      expect(darkPixels(out, page === 3 ? 7 : 3, boxOf(box))).toBe(0);
    }
    // Upright: pdftotext reads the typed name and the value as lines of page 3.
    const third = pdftotext(out, 3);
    expect(third).toContain('Erika Mustermann');
    expect(third).toContain('Muster Holding AG');
    expect(pdftotext(out, 11)).toContain('tx-ten-pages');
  });

  it("draws every value itself when the PDF's form will not flatten", async () => {
    const input = await claimInput();
    // A check box whose widget is on no page (no /P, in no page's /Annots): pdf-lib's flatten
    // cannot place it and throws.
    const doc = await PDFDocument.load(input.pdf);
    const broken = doc.getForm().createCheckBox('broken');
    broken.addToPage(doc.getPage(0), { x: 500, y: 700, width: 12, height: 12 });
    const widget = broken.acroField.getWidgets()[0]!;
    widget.dict.delete(PDFName.of('P'));
    doc.getPage(0).node.removeAnnot(doc.context.getObjectRef(widget.dict)!);
    const pdf = await compose({ ...input, pdf: await doc.save() });
    const info = pdfinfo(pdf);
    expect(info.errors).toBe('');
    expect(info.Form).toBe('none');
    const first = pdftotext(pdf, 1);
    expect(first).toContain('Zoë Ångström');
    expect(first).toContain('CHF 1234.50');
    const receipts = { x: 50, y: 138, width: 14, height: 14 };
    expect(darkPixels(pdf, 1, receipts)).toBeGreaterThan(5);
    expect(darkPixels(pdf, 1, boxOf(employeeBox))).toBeGreaterThan(100);
  });

  it('answers a file it cannot read, instead of throwing', async () => {
    const input = await claimInput();
    const result = await composeCompletedPdf({
      ...input,
      pdf: new TextEncoder().encode('%PDF-1.7 nonsense'),
    });
    expect(result.ok).toBe(false);
  });
});
