// The completed PDF of a transaction's document (docs/web-mode.md, "Completed documents"): the
// document as deployed with its fields' values written in (the PDF's own form fields set and
// flattened, the manifest's fields drawn where they sit), each signature drawn in its box, and an
// evidence page appended that says who signed, when, from where, and what was signed. Runs in a
// worker thread (./completion-worker.ts), never on the event loop.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Wire from '@pal-workflow/types';
import fontkit from '@pdf-lib/fontkit';
import {
  PDFCheckBox,
  PDFDocument,
  PDFDropdown,
  PDFName,
  PDFNull,
  PDFOptionList,
  PDFRadioGroup,
  PDFRef,
  PDFTextField,
  StandardFonts,
  TextAlignment,
  degrees,
  rgb,
  type PDFFont,
  type PDFPage,
  type PDFWidgetAnnotation,
} from 'pdf-lib';
import { inParagraphDirection, paragraphDirection, setBidiAware } from './bidi-text.js';
import { displayRectToPdf, normalRotation, type PageBox, type Rect } from './page-geometry.js';

/**
 * A signature as given (the published `input.signatures` shape), with the evidence of
 * domain/document-state.ts's StoredSignature that the completed PDF prints (this folder ranks
 * below domain/).
 */
export type SignatureToDraw = Omit<Wire.GivenSignature, 'file'> & {
  evidence: { name: string | null; email: string | null; ipAddress: string; userAgent: string };
};

/** What the completed PDF is made of; plain data, so that it crosses into the worker. */
export interface CompletionInput {
  /** The document's file as deployed. */
  pdf: Uint8Array;
  /** Its path in the pal folder (`documents/claim.pdf`). */
  file: string;
  /** SHA-256 of the file as deployed, base64. */
  digest: string;
  /** The pal version's fields and signatures (places, types). */
  fields: Wire.Field[];
  signatures: Wire.Signature[];
  /** Field id → value, as kept with the transaction. */
  values: Record<string, string>;
  given: SignatureToDraw[];
  transactionId: string;
  /** When the transaction completed, ISO 8601 UTC. */
  completedAt: string;
}

export type CompletionResult = { ok: true; pdf: Uint8Array } | { ok: false; detail: string };

type FontKind = 'regular' | 'bold' | 'mono' | 'script';

/**
 * The PDF standard fonts, which write Windows-1252 only, and, when some text needs more, DejaVu
 * (Latin, Greek, Cyrillic and many signs), embedded as a subset of the glyphs used. A text goes in
 * the standard font when that can write it, so a document of Western names is written as before.
 */
interface Fonts {
  standard: Record<FontKind, PDFFont>;
  wide?: Record<FontKind, PDFFont>;
}

/** The DejaVu faces standing in for each standard font (its npm package's TrueType files). */
const WIDE_FILES: Record<FontKind, string> = {
  regular: 'DejaVuSans.ttf',
  bold: 'DejaVuSans-Bold.ttf',
  mono: 'DejaVuSansMono.ttf',
  script: 'DejaVuSerif-Italic.ttf',
};
const wideBytes = new Map<FontKind, Uint8Array>();
const requireHere = createRequire(import.meta.url);
function wideFontFile(kind: FontKind): Uint8Array {
  let bytes = wideBytes.get(kind);
  if (!bytes) {
    bytes = readFileSync(requireHere.resolve(`dejavu-fonts-ttf/ttf/${WIDE_FILES[kind]}`));
    wideBytes.set(kind, bytes);
  }
  return bytes;
}

/**
 * The font to write `text` in: the standard one if it can, else its DejaVu stand-in, or DejaVu
 * Sans when that writes characters the stand-in lacks: DejaVu Serif Italic, a typed signature's,
 * has no Hebrew or Arabic, and an Arabic name came out as "???? ?? ?????" in its box.
 */
function fontFor(fonts: Fonts, kind: FontKind, text: string): PDFFont {
  const standard = fonts.standard[kind];
  if (!fonts.wide || writes(standard, text)) return standard;
  const wide = fonts.wide[kind];
  const sans = fonts.wide.regular;
  return wide !== sans && missing(sans, text) < missing(wide, text) ? sans : wide;
}

const INK = rgb(0.05, 0.1, 0.3);
const TEXT = rgb(0, 0, 0);
const MUTED = rgb(0.35, 0.35, 0.35);

/** Writes the completed PDF. Never throws: a file it cannot write is an answer. */
export async function composeCompletedPdf(input: CompletionInput): Promise<CompletionResult> {
  try {
    return { ok: true, pdf: await compose(input, 'form') };
  } catch (formError) {
    // The PDF's own form would not flatten (a widget without an appearance, a page it cannot
    // find): its fields are removed instead and every value is drawn at the field's place, as a
    // manifest field's is.
    try {
      return { ok: true, pdf: await compose(input, 'drawn') };
    } catch (error) {
      return { ok: false, detail: describe(error ?? formError) };
    }
  }
}

async function compose(input: CompletionInput, formFields: 'form' | 'drawn'): Promise<Uint8Array> {
  const doc = await PDFDocument.load(input.pdf, { updateMetadata: false });
  const fonts: Fonts = {
    standard: {
      regular: await doc.embedFont(StandardFonts.Helvetica),
      bold: await doc.embedFont(StandardFonts.HelveticaBold),
      mono: await doc.embedFont(StandardFonts.Courier),
      script: await doc.embedFont(StandardFonts.TimesRomanItalic),
    },
  };
  if (textsOf(input).some((text) => !writes(fonts.standard.regular, text))) {
    doc.registerFontkit(fontkit);
    const embed = (kind: FontKind) => doc.embedFont(wideFontFile(kind), { subset: true });
    fonts.wide = {
      regular: await embed('regular'),
      bold: await embed('bold'),
      mono: await embed('mono'),
      script: await embed('script'),
    };
    // Hebrew and Arabic are written in display order, numbers and Latin words in them too.
    for (const font of Object.values(fonts.wide)) setBidiAware(font);
  }
  const form = doc.getForm();
  const formIds = new Set(form.getFields().map((f) => f.getName()));
  const filledInForm = new Set<string>();
  if (formFields === 'form') {
    for (const field of input.fields) {
      if (!formIds.has(field.id!)) continue;
      const value = input.values[field.id!] ?? field.value;
      if (value !== undefined) setFormField(form, field.id!, value, fonts);
      filledInForm.add(field.id!);
    }
    form.flatten({ updateFieldAppearances: true });
    // pdf-lib leaves an empty form behind; a reader would still offer to fill it.
    doc.catalog.delete(PDFName.of('AcroForm'));
    fillObjectGaps(doc);
  } else {
    stripForm(doc);
  }
  const pages = doc.getPages();
  for (const field of input.fields) {
    if (filledInForm.has(field.id!)) continue;
    const value = input.values[field.id!] ?? field.value;
    const page = pages[(field.page ?? 1) - 1];
    if (value === undefined || value === '' || !page) continue;
    drawFieldValue(page, field, value, fonts);
  }
  for (const signature of input.signatures) {
    const given = input.given.find((g) => g.id === signature.id);
    const page = pages[(signature.page ?? 1) - 1];
    if (!given || !page) continue;
    const box = {
      x: signature.x ?? 0,
      y: signature.y ?? 0,
      width: signature.customWidth ?? 0,
      height: signature.customHeight ?? 0,
    };
    await drawSignature(doc, page, box, given, fonts);
  }
  addEvidencePages(doc, input, fonts);
  doc.setProducer('Pal Workflow Services');
  doc.setModificationDate(new Date(input.completedAt));
  return doc.save();
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0].trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Sets one of the PDF's own fields; a value its field cannot take leaves the field as it was. */
function setFormField(
  form: ReturnType<PDFDocument['getForm']>,
  id: string,
  value: string,
  fonts: Fonts,
): void {
  const field = form.getField(id);
  const font = fontFor(fonts, 'regular', value);
  // Flattening draws a changed field in Helvetica; one whose text needs DejaVu is drawn now.
  const drawn = font !== fonts.standard.regular;
  if (field instanceof PDFTextField) {
    const encoded = encodable(value, font);
    const max = field.getMaxLength();
    const text = max !== undefined ? encoded.slice(0, max) : encoded;
    const widget = field.acroField.getWidgets()[0];
    const box = widget && textBoxOf(widget);
    if (!box || field.isCombed()) field.setText(text);
    else if (field.isMultiline()) {
      // pdf-lib breaks lines only at spaces and clips what falls below the box, unmarked; and
      // auto-sized (0) text fills the box with a few huge words. So the lines are made here, as
      // pdf-lib will set them (a line is 1.2 times the font's height), at body text's size or
      // the field's own, smaller until they fit.
      const height = (size: number) => font.heightAtSize(size) * 1.2;
      const fit = fitMultiline(text, font, box, {
        largest: givenFontSize(field, widget),
        firstBaseline: height,
        leading: height,
      });
      setFontSize(field, widget, fit.size);
      field.setText(fit.lines.join('\n'));
    } else {
      // One line: pdf-lib clips what is wider than the box, unmarked, at a size given or at one
      // it chooses itself (down to 3 pt, by kerned widths while it draws unkerned). Set here:
      // the size given, or the largest the box's height allows, made smaller down to 6 pt, then
      // cut with "...". Tabs and line breaks are spaces on one line (pdf-lib's would be four
      // spaces, or a character Helvetica cannot write).
      const line = text.replace(/[\t\n\r]/g, ' ');
      // The height pdf-lib sets one line in is its own bounds', 2 pt more a side than the box here.
      const tallest = Math.floor(((box.height + 4) / (font.heightAtSize(1) * 1.2)) * 2) / 2;
      const given = givenFontSize(field, widget);
      const tall = Math.max(TEXT_SIZES.least, tallest);
      const largest = given === undefined ? tall : Math.min(given, tall);
      const fit = fitOneLine(line, font, box.width, largest);
      setFontSize(field, widget, fit.size);
      field.setText(fit.line);
    }
    // A right-to-left value is set from the right, as its writer would; a field the PDF's author
    // centred or set from the right keeps that. One alignment holds for a field's every line: its
    // first paragraph's direction decides.
    const first = text.split('\n', 1)[0]!;
    if (paragraphDirection(first) === 'rtl' && field.getAlignment() === TextAlignment.Left)
      field.setAlignment(TextAlignment.Right);
    if (drawn) field.updateAppearances(font);
  } else if (field instanceof PDFCheckBox) {
    if (value === 'true') field.check();
    else field.uncheck();
  } else if (field instanceof PDFRadioGroup) {
    if (field.getOptions().includes(value)) field.select(value);
  } else if (field instanceof PDFDropdown || field instanceof PDFOptionList) {
    if (field.getOptions().includes(value)) field.select(value);
    else if (field instanceof PDFDropdown && field.isEditable()) {
      field.select(encodable(value, font));
      if (drawn) field.updateAppearances(font);
    }
  }
}

/**
 * Flattening deletes the fields' objects, and pdf-lib then writes a cross-reference table with
 * holes that readers report as damaged ("Invalid XRef entry"): each hole becomes a null object.
 */
function fillObjectGaps(doc: PDFDocument): void {
  const context = doc.context;
  for (let n = 1; n <= context.largestObjectNumber; n++) {
    const ref = PDFRef.of(n);
    if (!context.lookup(ref)) context.assign(ref, PDFNull);
  }
}

/** Removes the PDF's form: its widget annotations from every page, and the AcroForm. */
function stripForm(doc: PDFDocument): void {
  for (const page of doc.getPages()) {
    const annots = page.node.Annots();
    if (!annots) continue;
    for (let i = annots.size() - 1; i >= 0; i--) {
      const annot = doc.context.lookup(annots.get(i));
      const subtype =
        annot && 'get' in annot
          ? (annot as { get(k: PDFName): unknown }).get(PDFName.of('Subtype'))
          : undefined;
      if (subtype === PDFName.of('Widget')) annots.remove(i);
    }
  }
  doc.catalog.delete(PDFName.of('AcroForm'));
}

// The standard fonts write Windows-1252 only; anything else would make pdf-lib throw.
const charSets = new WeakMap<PDFFont, Set<number>>();
function characterSet(font: PDFFont): Set<number> {
  let set = charSets.get(font);
  if (!set) {
    set = new Set(font.getCharacterSet());
    charSets.set(font, set);
  }
  return set;
}

/** Whether the font writes every character of the text (line breaks and tabs aside). */
function writes(font: PDFFont, text: string): boolean {
  const set = characterSet(font);
  for (const char of text.normalize('NFC'))
    if (char !== '\n' && char !== '\r' && char !== '\t' && !set.has(char.codePointAt(0)!))
      return false;
  return true;
}

/** How many characters of the text the font does not write (line breaks and tabs aside). */
function missing(font: PDFFont, text: string): number {
  const set = characterSet(font);
  let count = 0;
  for (const char of text.normalize('NFC'))
    if (char !== '\n' && char !== '\r' && char !== '\t' && !set.has(char.codePointAt(0)!)) count++;
  return count;
}

/** Every text the completed PDF may write: what decides whether DejaVu is embedded. */
function textsOf(input: CompletionInput): string[] {
  return [
    input.file,
    input.transactionId,
    ...Object.values(input.values),
    ...input.fields.map((f) => f.value ?? ''),
    ...input.given.flatMap((g) => [
      g.id,
      g.role,
      g.text ?? '',
      g.sso ?? '',
      g.evidence.name ?? '',
      g.evidence.email ?? '',
      g.evidence.userAgent,
    ]),
  ];
}

/** The text with each character the font cannot write replaced by "?". */
export function encodable(text: string, font: PDFFont): string {
  const set = characterSet(font);
  let out = '';
  // A browser posts a textarea's line breaks as CRLF; pdf-lib's layout breaks a line at "\r" and
  // again at "\n", which spaced a form field's lines twice and pushed the last ones out of its box.
  for (const char of text.normalize('NFC').replace(/\r\n?/g, '\n')) {
    if (char === '\n' || char === '\r' || char === '\t') out += char;
    else out += set.has(char.codePointAt(0)!) ? char : '?';
  }
  return out;
}

function pageBox(page: PDFPage): PageBox {
  return { box: page.getCropBox(), rotation: normalRotation(page.getRotation().angle) };
}

/**
 * Where to draw something that is upright to the reader: the PDF point of the displayed point
 * (x, y from the top-left), and the turn that keeps text and images upright on a turned page.
 */
function placeOnPage(
  page: PDFPage,
  x: number,
  y: number,
): { x: number; y: number; rotate: ReturnType<typeof degrees> } {
  const box = pageBox(page);
  const at = displayRectToPdf({ x, y, width: 0, height: 0 }, box);
  return { x: at.x, y: at.y, rotate: degrees(box.rotation) };
}

/** The room pdf-lib gives a text field's widget: its box within border and padding, upright. */
function textBoxOf(widget: PDFWidgetAnnotation): { width: number; height: number } | undefined {
  const rect = widget.getRectangle();
  const turned =
    (normalRotation(widget.getAppearanceCharacteristics()?.getRotation() ?? 0) / 90) % 2;
  const [width, height] = turned ? [rect.height, rect.width] : [rect.width, rect.height];
  // pdf-lib's border and padding on each side, and some room.
  const inset = 2 * ((widget.getBorderStyle()?.getWidth() ?? 1) + 3);
  if (width - inset <= 0 || height - inset <= 0) return undefined;
  return { width: width - inset, height: height - inset };
}

const TF = /(\d*\.\d+|\d+)(\s+Tf)/;

/** The size a widget's text is set at: its own DA's (as pdf-lib reads it), else its field's; undefined for auto (0). */
function givenFontSize(field: PDFTextField, widget: PDFWidgetAnnotation): number | undefined {
  for (const da of [widget.getDefaultAppearance(), field.acroField.getDefaultAppearance()]) {
    const size = TF.exec(da ?? '')?.[1];
    if (size !== undefined) return Number(size) > 0 ? Number(size) : undefined;
  }
  return undefined;
}

/** Sets the size where pdf-lib reads it: the widget's own DA if it has one, and the field's. */
function setFontSize(field: PDFTextField, widget: PDFWidgetAnnotation, size: number): void {
  const own = widget.getDefaultAppearance();
  if (own !== undefined && TF.test(own)) widget.setDefaultAppearance(own.replace(TF, `${size}$2`));
  const da = field.acroField.getDefaultAppearance();
  // pdf-lib's appearance takes the font it is given; the DA's name only has to be there.
  if (da !== undefined && TF.test(da)) field.setFontSize(size);
  else field.acroField.setDefaultAppearance(`/Helv ${size} Tf 0 g`);
}

const advances = new WeakMap<PDFFont, Map<string, number>>();
const pairs = new WeakMap<PDFFont, Map<string, number>>();

/**
 * The width of `text` at `size` as pdf-lib draws it and as it lays it out, the larger: pdf-lib
 * writes each character's advance (no kerning), but breaks a form field's lines by its
 * widthOfTextAtSize, which kerns the standard fonts (Helvetica's "rt" is 0.04 em wider). Both
 * are read a character and a pair at a time and kept: widthOfTextAtSize lays out the whole text
 * each time for an embedded font (65,536 characters of DejaVu take a third of a second, and a
 * fit tries up to nine sizes).
 */
function textWidth(font: PDFFont, text: string, size: number): number {
  let known = advances.get(font);
  if (!known) advances.set(font, (known = new Map()));
  let kerns = pairs.get(font);
  if (!kerns) pairs.set(font, (kerns = new Map()));
  let drawn = 0;
  let kerning = 0;
  let previous: string | undefined;
  for (const char of text) {
    let advance = known.get(char);
    if (advance === undefined) known.set(char, (advance = font.widthOfTextAtSize(char, 1)));
    drawn += advance;
    if (previous !== undefined) {
      const pair = previous + char;
      let kern = kerns.get(pair);
      if (kern === undefined)
        kerns.set(pair, (kern = font.widthOfTextAtSize(pair, 1) - known.get(previous)! - advance));
      kerning += kern;
    }
    previous = char;
  }
  return (drawn + Math.max(0, kerning)) * size;
}

/**
 * Whether `text` fits `width` at `size`. No character the fonts write is narrower than 0.15 em
 * (Helvetica's ' is 0.19, DejaVu's narrowest 0.27; zero-width marks aside, which only break a
 * line sooner), so a text longer than that allows is not measured.
 */
function fitsWidth(font: PDFFont, text: string, size: number, width: number): boolean {
  if (text.length * size * 0.15 > width) return false;
  return textWidth(font, text, size) <= width;
}

/**
 * How many characters of `chars` from `start` fit `width` at `size`, with `suffix` after them.
 * Measured O(k log k) for a fit of k, however long the
 * text: the end is found by doubling, then halving.
 */
function fittingCount(
  chars: readonly string[],
  start: number,
  font: PDFFont,
  size: number,
  width: number,
  suffix = '',
): number {
  const fits = (count: number) =>
    fitsWidth(font, chars.slice(start, start + count).join('') + suffix, size, width);
  const left = chars.length - start;
  let good = 0;
  let bad = 1;
  while (bad <= left && fits(bad)) {
    good = bad;
    bad *= 2;
  }
  if (bad > left) {
    if (fits(left)) return left;
    bad = left;
  }
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    if (fits(mid)) good = mid;
    else bad = mid;
  }
  return good;
}

/** The longest start of `text` that fits `width` at `size`, with "..." when it was cut. */
function fitLine(text: string, font: PDFFont, size: number, width: number): string {
  if (fitsWidth(font, text, size, width)) return text;
  const chars = Array.from(text);
  return `${chars.slice(0, fittingCount(chars, 0, font, size, width, '...')).join('')}...`;
}

/** Text that does not fit its box is made smaller in these steps, down to the least, then cut. */
const TEXT_SIZES = { least: 6, step: 0.5 } as const;

/**
 * The largest size, `most` or a half point below it down to the least, at which `fits`; undefined
 * when not even the least does. Halved, not stepped through: a field may ask for 990 pt. Text that
 * fits at a size fits at every smaller one.
 */
function largestFitting(most: number, fits: (size: number) => boolean): number | undefined {
  if (fits(most)) return most;
  const { least, step } = TEXT_SIZES;
  // Sizes least + k × step below `most`: the k that fits is somewhere in [low, high).
  let high = Math.ceil((most - least) / step);
  if (high <= 0 || !fits(least)) return undefined;
  let low = 0;
  while (high - low > 1) {
    const middle = (low + high) >> 1;
    if (fits(least + middle * step)) low = middle;
    else high = middle;
  }
  return least + low * step;
}

/** The largest size from `largest` down to the least at which `text` fits on one line; else cut at the least. */
function fitOneLine(
  text: string,
  font: PDFFont,
  width: number,
  largest: number,
): { size: number; line: string } {
  const size = largestFitting(largest, (size) => fitsWidth(font, text, size, width));
  if (size !== undefined) return { size, line: text };
  const least = Math.min(largest, TEXT_SIZES.least);
  return { size: least, line: fitLine(text, font, least, width) };
}

/**
 * Lines of `text` no wider than `width`, broken at spaces, and a word wider than a line where it
 * must be (nothing of it is lost); at most `most` + 1 of them, enough to tell that they do not fit.
 * Each line keeps its paragraph's direction (inParagraphDirection).
 */
function wrap(text: string, font: PDFFont, size: number, width: number, most = Infinity): string[] {
  const lines: string[] = [];
  const fits = (line: string) => fitsWidth(font, line, size, width);
  for (const paragraph of text.split('\n')) {
    const direction = paragraphDirection(paragraph);
    const push = (line: string) => lines.push(inParagraphDirection(line, direction));
    let line = '';
    for (const word of paragraph.split(/\s+/)) {
      if (lines.length > most) return lines;
      const next = line ? `${line} ${word}` : word;
      if (fits(next)) {
        line = next;
        continue;
      }
      if (line) push(line);
      line = word;
      if (fits(word)) continue;
      const chars = Array.from(word);
      let start = 0;
      while (chars.length - start > 0 && lines.length <= most) {
        // One character at least, wider than the line or not: the line must move on.
        const count = Math.max(1, fittingCount(chars, start, font, size, width));
        const piece = chars.slice(start, start + count).join('');
        start += count;
        if (start < chars.length) push(piece);
        else line = piece;
      }
    }
    push(line);
  }
  return lines;
}

/** Multi-line text is set at most this large, unless its field says, and made smaller to fit. */
const TEXTAREA_MOST = 10;

/** Where lines are set in a box: the first baseline below its top, and the distance between lines. */
interface LineMetrics {
  largest?: number;
  firstBaseline: (size: number) => number;
  leading: (size: number) => number;
}

/**
 * Multi-line text in a box: the largest size at which all its lines fit, and the lines. When even
 * the least size does not hold them, the lines that fit, the last ending in "..." as a one-line
 * field's cut does: a signed document never drops text unmarked.
 */
export function fitMultiline(
  text: string,
  font: PDFFont,
  box: { width: number; height: number },
  metrics: LineMetrics,
): { size: number; lines: string[]; cut: boolean } {
  const rowsAt = (size: number) =>
    Math.max(1, Math.floor((box.height - metrics.firstBaseline(size)) / metrics.leading(size)) + 1);
  const largest = metrics.largest ?? TEXTAREA_MOST;
  const most = Math.max(TEXT_SIZES.least, Math.min(largest, box.height));
  const wrapped = new Map<number, string[]>();
  const linesAt = (size: number) => {
    let lines = wrapped.get(size);
    if (!lines) wrapped.set(size, (lines = wrap(text, font, size, box.width, rowsAt(size))));
    return lines;
  };
  const fitting = largestFitting(most, (size) => linesAt(size).length <= rowsAt(size));
  if (fitting !== undefined) return { size: fitting, lines: linesAt(fitting), cut: false };
  const size = TEXT_SIZES.least;
  const rows = rowsAt(size);
  const lines = wrap(text, font, size, box.width, rows);
  if (lines.length <= rows) return { size, lines, cut: false };
  const kept = lines.slice(0, rows);
  const last = Array.from(kept[rows - 1]!);
  kept[rows - 1] =
    `${last.slice(0, fittingCount(last, 0, font, size, box.width, '...')).join('')}...`;
  return { size, lines: kept, cut: true };
}

function drawFieldValue(page: PDFPage, field: Wire.Field, value: string, fonts: Fonts): void {
  const box: Rect = {
    x: field.x ?? 0,
    y: field.y ?? 0,
    width: field.width ?? 0,
    height: field.height ?? 0,
  };
  const type = field.type ?? 'TEXT';
  if (type === 'CHECKBOX' || type === 'CHECKBOXCHECKED') {
    if (value !== 'true') return;
    // A check mark: two strokes inside the box.
    const s = Math.min(box.width, box.height);
    const left = box.x + (box.width - s) / 2;
    const top = box.y + (box.height - s) / 2;
    const point = (fx: number, fy: number) => {
      const p = placeOnPage(page, left + fx * s, top + fy * s);
      return { x: p.x, y: p.y };
    };
    const thickness = Math.max(1, s / 8);
    page.drawLine({ start: point(0.15, 0.55), end: point(0.4, 0.8), thickness, color: TEXT });
    page.drawLine({ start: point(0.4, 0.8), end: point(0.85, 0.2), thickness, color: TEXT });
    return;
  }
  const font = fontFor(fonts, 'regular', value);
  const text = encodable(value, font);
  const pad = 2;
  const width = Math.max(1, box.width - 2 * pad);
  if (type === 'TEXTAREA') {
    const { size, lines } = fitMultiline(
      text,
      font,
      { width, height: Math.max(1, box.height - 2 * pad) },
      { firstBaseline: (size) => size, leading: (size) => size * 1.2 },
    );
    const leading = size * 1.2;
    lines.forEach((line, i) => {
      page.drawText(line, {
        ...placeOnPage(
          page,
          startOf(line, font, size, box.x + pad, width),
          box.y + pad + size + i * leading,
        ),
        size,
        font,
        color: TEXT,
      });
    });
    return;
  }
  const size = Math.min(11, Math.max(5, (box.height - 2 * pad) * 0.8));
  const line = fitLine(text.replace(/\s+/g, ' '), font, size, width);
  // The baseline sits so that the line is centred in the box's height.
  const baseline = box.y + box.height / 2 + size * 0.35;
  const left = startOf(line, font, size, box.x + pad, width);
  page.drawText(line, { ...placeOnPage(page, left, baseline), size, font, color: TEXT });
}

/**
 * Where a line drawn in a box of `width` from `left` starts: at the left, or for a right-to-left
 * paragraph's line at the right, as a person writing it would set it (and as a browser's
 * `dir="auto"` box shows it). Measured as drawn, each run shaped (bidi-text.ts).
 */
function startOf(line: string, font: PDFFont, size: number, left: number, width: number): number {
  if (paragraphDirection(line) === 'ltr') return left;
  return left + Math.max(0, width - font.widthOfTextAtSize(line, size));
}

async function drawSignature(
  doc: PDFDocument,
  page: PDFPage,
  box: Rect,
  given: SignatureToDraw,
  fonts: Fonts,
): Promise<void> {
  if (given.kind === 'DRAWN' && given.image) {
    let image;
    try {
      image = await doc.embedPng(Buffer.from(given.image, 'base64'));
    } catch {
      image = undefined;
    }
    if (image) {
      // Scaled into the box keeping its aspect, centred.
      const scale = Math.min(box.width / image.width, box.height / image.height);
      const width = image.width * scale;
      const height = image.height * scale;
      const left = box.x + (box.width - width) / 2;
      const bottom = box.y + (box.height + height) / 2;
      page.drawImage(image, { ...placeOnPage(page, left, bottom), width, height });
      return;
    }
  }
  const typed = given.text ?? given.evidence.name ?? '';
  const font = fontFor(fonts, 'script', typed);
  const name = encodable(typed, font).replace(/\s+/g, ' ').trim();
  if (!name) return;
  // As large as the box allows, made smaller to fit its width down to 4 pt (or the size its
  // height allows, when that is less); a name wider than the box even then (a typed signature
  // may be 201 characters) is cut with "...", as a field's text is: drawn at 4 pt it had started
  // left of the box, and off the page.
  const room = box.width * 0.95;
  const tallest = Math.min(36, box.height * 0.7);
  const least = Math.min(4, tallest);
  let size = tallest;
  if (textWidth(font, name, size) > room)
    size = Math.max(least, (size * room) / textWidth(font, name, size));
  const line = fitLine(name, font, size, room);
  const left = box.x + (box.width - textWidth(font, line, size)) / 2;
  const baseline = box.y + box.height / 2 + size * 0.3;
  page.drawText(line, { ...placeOnPage(page, left, baseline), size, font, color: INK });
}

/** A4, upright. */
const EVIDENCE_PAGE: [number, number] = [595.28, 841.89];
const MARGIN = 50;

/** The evidence pages: the document and transaction, then each signature's record. */
function addEvidencePages(doc: PDFDocument, input: CompletionInput, fonts: Fonts): void {
  const [pageWidth, pageHeight] = EVIDENCE_PAGE;
  const width = pageWidth - 2 * MARGIN;
  let page = doc.addPage(EVIDENCE_PAGE);
  let y = pageHeight - MARGIN;
  const line = (text: string, kind: FontKind, size: number, color = TEXT, indent = 0) => {
    const font = fontFor(fonts, kind, text);
    for (const part of wrap(encodable(text, font), font, size, width - indent)) {
      if (y - size < MARGIN) {
        page = doc.addPage(EVIDENCE_PAGE);
        y = pageHeight - MARGIN;
      }
      y -= size * 1.3;
      page.drawText(part, { x: MARGIN + indent, y, size, font, color });
    }
  };
  const gap = (points: number) => (y -= points);
  const hex = Buffer.from(input.digest, 'base64').toString('hex');

  line('Evidence of signatures', 'bold', 18);
  gap(6);
  line(`Document: ${input.file}`, 'regular', 10);
  line(`Transaction: ${input.transactionId}`, 'regular', 10);
  line(`Completed: ${input.completedAt}`, 'regular', 10);
  line('SHA-256 of the document as deployed (base64):', 'regular', 10);
  line(input.digest, 'mono', 9, TEXT, 12);
  line('The same, hexadecimal:', 'regular', 10);
  line(hex, 'mono', 9, TEXT, 12);
  gap(10);
  const signatures = [...input.given].sort((a, b) => a.recordTime - b.recordTime);
  if (signatures.length === 0) line('No signatures were given on this document.', 'regular', 10);
  for (const s of signatures) {
    gap(8);
    line(`Signature "${s.id}" (role ${s.role})`, 'bold', 12);
    line(`Signer: ${s.evidence.name ?? '(no name)'}`, 'regular', 10, TEXT, 12);
    line(`E-mail: ${s.evidence.email ?? '(none)'}`, 'regular', 10, TEXT, 12);
    line(
      `Signed at (UTC): ${new Date(s.recordTime * 1000).toISOString()}`,
      'regular',
      10,
      TEXT,
      12,
    );
    line(
      `How: ${s.kind === 'DRAWN' ? 'drawn' : `typed as "${s.text ?? ''}"`}`,
      'regular',
      10,
      TEXT,
      12,
    );
    line(`IP address: ${s.evidence.ipAddress}`, 'regular', 10, TEXT, 12);
    line(`User agent: ${s.evidence.userAgent}`, 'regular', 9, MUTED, 12);
    if (s.sso) line(`SSO: ${s.sso}`, 'regular', 9, MUTED, 12);
  }
}
