// The position convention checked against a PDF renderer nobody here wrote: poppler's pdftoppm
// (Debian's poppler-utils, which .ci/run installs) draws each page as a viewer shows it, and the
// black boxes must be where the service says they are, on pages turned every way and cropped.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, degrees, rgb } from 'pdf-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { displayRectToPdf, normalRotation, type Rect } from './page-geometry.js';
import { readPdf } from './pdf-reader.js';

const dir = mkdtempSync(join(tmpdir(), 'pal-render-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bounding box of the dark pixels of each page, rendered at 72 dpi (1 pixel = 1 point). */
function darkBoxes(pdf: Uint8Array): Rect[] {
  const file = join(dir, 'page.pdf');
  writeFileSync(file, pdf);
  execFileSync('pdftoppm', ['-r', '72', '-cropbox', '-gray', file, join(dir, 'page')]);
  const boxes: Rect[] = [];
  for (let n = 1; ; n++) {
    let pgm: Buffer;
    try {
      pgm = readFileSync(join(dir, `page-${n}.pgm`));
    } catch {
      return boxes;
    }
    const [, w, h] = pgm.toString('latin1', 0, 32).split(/\s+/).map(Number);
    const pixels = pgm.subarray(pgm.length - w * h);
    let [left, top, right, bottom] = [w, h, -1, -1];
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        if (pixels[y * w + x] >= 128) continue;
        [left, top] = [Math.min(left, x), Math.min(top, y)];
        [right, bottom] = [Math.max(right, x), Math.max(bottom, y)];
      }
    }
    boxes.push({ x: left, y: top, width: right - left + 1, height: bottom - top + 1 });
  }
}

const ROTATIONS = [0, 90, 180, 270];
/** A page of 612 × 792 points cropped to 500 × 700 from (10, 20), turned as given. */
function addCroppedPage(doc: PDFDocument, rotation: number) {
  const page = doc.addPage([612, 792]);
  page.setCropBox(10, 20, 500, 700);
  page.setRotation(degrees(rotation));
  return page;
}

describe('the position convention, as a PDF renderer draws it', () => {
  it('reads a form field where the renderer draws its widget, on pages turned every way', async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const form = doc.getForm();
    for (const rotation of ROTATIONS) {
      form.createTextField(`field${rotation}`).addToPage(addCroppedPage(doc, rotation), {
        x: 60,
        y: 120,
        width: 200,
        height: 30,
        borderWidth: 0,
        backgroundColor: rgb(0, 0, 0),
      });
    }
    const pdf = await doc.save();
    const reading = await readPdf(pdf);
    if (!reading.ok) throw new Error(reading.detail);
    expect(reading.facts.formFields.map((f) => f.rect)).toEqual(darkBoxes(pdf));
    expect(reading.facts.pages).toEqual([
      { width: 500, height: 700 },
      { width: 700, height: 500 },
      { width: 500, height: 700 },
      { width: 700, height: 500 },
    ]);
  });

  it('draws a box given from the top-left corner where a person saw it', async () => {
    const doc = await PDFDocument.create({ updateMetadata: false });
    const target = { x: 40, y: 30, width: 120, height: 50 };
    for (const rotation of ROTATIONS) {
      const page = addCroppedPage(doc, rotation);
      const box = { box: page.getCropBox(), rotation: normalRotation(rotation) };
      page.drawRectangle({ ...displayRectToPdf(target, box), color: rgb(0, 0, 0) });
    }
    expect(darkBoxes(await doc.save())).toEqual(ROTATIONS.map(() => target));
  });
});
