// Real document files for tests: PDFs written by pdf-lib (the 3-page claim form with every kind of
// AcroForm field), and PNG and JPEG images built byte by byte to the formats' specifications.
import { readFileSync } from 'node:fs';
import { greyPng } from '@pal-workflow/test-support';
import { PDFDocument, PDFHexString, PDFName, PDFString, degrees, type PDFField } from 'pdf-lib';

/** The committed encrypted PDFs (test/fixtures/documents/README.md says how they were made). */
export function encryptedPdf(name: 'encrypted-aes256' | 'encrypted-restricted'): Buffer {
  return readFileSync(new URL(`./fixtures/documents/${name}.pdf`, import.meta.url));
}

/**
 * A claim form of three pages:
 * 1. US Letter (612 × 792): text field `applicant.name` ("Ada Lovelace") at PDF (50, 700, 200 × 20),
 *    drop-down `country` (CH|DE|FR, DE chosen) at (300, 700, 100 × 20), read-only text `office`.
 * 2. A4 (595.28 × 841.89): multi-line text `notes` at (50, 100, 300 × 100), check box `agree`
 *    (checked) at (50, 300, 15 × 15), check box `newsletter` at (100, 300, 15 × 15), and a hidden
 *    text field `internal`.
 * Alternate names (/TU, what a person reads): `applicant.name` "Full name" (PDFDocEncoding),
 * `notes` "Notes for the\n  reviewer – optional" (UTF-16), `newsletter` only white space.
 * 3. US Letter turned a quarter clockwise (/Rotate 90, shown 792 × 612): radio group `kind`
 *    (Travel at (50, 500), Meals at (100, 500), 15 × 15 each; Meals chosen).
 */
export async function claimFormPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const form = doc.getForm();
  const noBorder = { borderWidth: 0 };

  const first = doc.addPage([612, 792]);
  first.drawText('Expense claim', { x: 50, y: 740, size: 18 });
  const name = form.createTextField('applicant.name');
  name.setText('Ada Lovelace');
  name.addToPage(first, { x: 50, y: 700, width: 200, height: 20, ...noBorder });
  alternateName(name, PDFString.of('Full name'));
  const country = form.createDropdown('country');
  country.addOptions(['CH', 'DE', 'FR']);
  country.select('DE');
  country.addToPage(first, { x: 300, y: 700, width: 100, height: 20, ...noBorder });
  const office = form.createTextField('office');
  office.setText('Zurich');
  office.enableReadOnly();
  office.addToPage(first, { x: 50, y: 650, width: 100, height: 20, ...noBorder });

  const second = doc.addPage([595.28, 841.89]);
  const notes = form.createTextField('notes');
  notes.enableMultiline();
  notes.addToPage(second, { x: 50, y: 100, width: 300, height: 100, ...noBorder });
  alternateName(notes, PDFHexString.fromText('Notes for the\n  reviewer – optional'));
  const agree = form.createCheckBox('agree');
  agree.addToPage(second, { x: 50, y: 300, width: 15, height: 15, ...noBorder });
  agree.check();
  const newsletter = form.createCheckBox('newsletter');
  newsletter.addToPage(second, { x: 100, y: 300, width: 15, height: 15, ...noBorder });
  alternateName(newsletter, PDFString.of('  '));
  form
    .createTextField('internal')
    .addToPage(second, { x: 50, y: 400, width: 100, height: 20, hidden: true, ...noBorder });

  const third = doc.addPage([612, 792]);
  third.setRotation(degrees(90));
  const kind = form.createRadioGroup('kind');
  kind.addOptionToPage('Travel', third, { x: 50, y: 500, width: 15, height: 15, ...noBorder });
  kind.addOptionToPage('Meals', third, { x: 100, y: 500, width: 15, height: 15, ...noBorder });
  kind.select('Meals');

  return doc.save();
}

function alternateName(field: PDFField, name: PDFString | PDFHexString): void {
  field.acroField.dict.set(PDFName.of('TU'), name);
}

/** A PDF of blank pages of the given sizes (points), without a form. */
export async function blankPdf(...sizes: [number, number][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  for (const size of sizes) doc.addPage(size);
  return doc.save();
}

/** A PDF with one text field placed (in PDF space) where the test says: off the page, say. */
export async function pdfWithField(
  id: string,
  rect: { x: number; y: number; width: number; height: number },
  options: string[] = [],
): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([612, 792]);
  const form = doc.getForm();
  if (options.length > 0) {
    const choice = form.createDropdown(id);
    choice.addOptions(options);
    choice.addToPage(page, { ...rect, borderWidth: 0 });
  } else {
    form.createTextField(id).addToPage(page, { ...rect, borderWidth: 0 });
  }
  return doc.save();
}

/** A white 8-bit greyscale PNG of width × height pixels. */
export function png(width: number, height: number): Buffer {
  return greyPng(width, height);
}

function jpegSegment(marker: number, data: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
}

/**
 * The header of a baseline JPEG of width × height pixels (SOI, a JFIF APP0 or an Exif APP1 with
 * the orientation, SOF0, EOI): what a reader of its size sees; it carries no picture data.
 */
export function jpeg(width: number, height: number, orientation?: number): Buffer {
  const segments: Buffer[] = [Buffer.from([0xff, 0xd8])];
  if (orientation === undefined) {
    // "JFIF\0", version 1.1, no density unit, 1:1, no thumbnail.
    const jfif = Buffer.from([0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
    segments.push(jpegSegment(0xe0, jfif));
  } else {
    // "Exif\0\0", then a big-endian TIFF header with one IFD entry: 0x0112 Orientation, SHORT.
    const tiff = Buffer.from([
      0x4d,
      0x4d,
      0x00,
      0x2a,
      0x00,
      0x00,
      0x00,
      0x08,
      0x00,
      0x01,
      0x01,
      0x12,
      0x00,
      0x03,
      0x00,
      0x00,
      0x00,
      0x01,
      0x00,
      orientation,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
      0x00,
    ]);
    segments.push(jpegSegment(0xe1, Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff])));
  }
  const frame = Buffer.alloc(6 + 3);
  frame[0] = 8; // precision
  frame.writeUInt16BE(height, 1);
  frame.writeUInt16BE(width, 3);
  frame[5] = 1; // one component
  frame.set([1, 0x11, 0], 6);
  segments.push(jpegSegment(0xc0, frame), Buffer.from([0xff, 0xd9]));
  return Buffer.concat(segments);
}

/** A greyscale PNG of width × height pixels, white with a black band across its middle: ink. */
export function inkPng(width: number, height: number): Buffer {
  return greyPng(width, height, (_x, y) => (Math.abs(y - height / 2) < height / 6 ? 0 : 0xff));
}
