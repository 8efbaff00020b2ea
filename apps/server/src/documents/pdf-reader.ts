// What deployment needs to know of a PDF, read with pdf-lib: the size of each page as displayed and
// the PDF's own form fields (AcroForm) with their places. Runs inside the document worker
// (./pdf-worker.ts), which keeps pdf-lib's console warnings and a damaged file's appetite for
// memory away from the deploying process.
import type { FieldType } from '@pal-workflow/types';
import {
  AnnotationFlags,
  PDFCheckBox,
  PDFDocument,
  PDFDropdown,
  PDFHexString,
  PDFName,
  PDFOptionList,
  PDFString,
  PDFRadioGroup,
  PDFRef,
  PDFTextField,
  ParseSpeeds,
  hasUtf16BOM,
  pdfDocEncodingDecode,
  utf16Decode,
  type PDFField,
  type PDFPage,
  type PDFWidgetAnnotation,
} from 'pdf-lib';
import {
  displayedSize,
  normalRotation,
  pdfRectToDisplay,
  wholeRect,
  type PageBox,
  type Rect,
} from './page-geometry.js';

/** A page's size as displayed (crop box, turned by /Rotate), in points. */
export interface PageSize {
  width: number;
  height: number;
}

/** One of the PDF's own form fields, as a person would fill it in. */
export interface PdfFormField {
  /** The field's fully qualified name (`applicant.name`). */
  id: string;
  type: `${FieldType}`;
  /** 1-based page of its first visible widget. */
  page: number;
  /** Whole points from the displayed page's top-left corner (radio groups: all their buttons). */
  rect: Rect;
  value?: string;
  /** The choices of a radio group, drop-down or list, as the PDF names them. */
  options?: string[];
  /**
   * The field's alternate name (`/TU`), which PDF makes for a person to read ("VAT number" for
   * `vatId`), white space collapsed, from its first LABEL_READ_BYTES bytes (the domain cuts it
   * further); absent when empty.
   */
  label?: string;
}

export interface PdfFacts {
  pages: PageSize[];
  formFields: PdfFormField[];
}

export type PdfReading =
  { ok: true; facts: PdfFacts } | { ok: false; problem: 'encrypted' | 'damaged'; detail: string };

// Encryption is checked through isEncrypted rather than pdf-lib's EncryptedPDFError, whose
// ES5 class is not `instanceof`-testable.
const LOAD = {
  updateMetadata: false,
  parseSpeed: ParseSpeeds.Fastest,
  ignoreEncryption: true,
} as const;
const ENCRYPTED: PdfReading = { ok: false, problem: 'encrypted', detail: '' };
/** More than any label needs (the domain keeps 200): a file's 4 MB of /TU stays in the worker. */
const LABEL_READ_MAX = 1000;

/**
 * Reads a PDF. A damaged file (one pdf-lib can only read by skipping objects it cannot parse) is
 * refused, as an encrypted one is: the service fills and writes these files later, and a person
 * must see what the author saw. Never throws.
 */
export async function readPdf(bytes: Uint8Array): Promise<PdfReading> {
  let doc: PDFDocument;
  try {
    doc = await PDFDocument.load(bytes, { ...LOAD, throwOnInvalidObject: true });
  } catch (strictError) {
    return classifyFailure(bytes, strictError);
  }
  if (doc.isEncrypted) return ENCRYPTED;
  try {
    const pages = doc.getPages();
    if (pages.length === 0) return { ok: false, problem: 'damaged', detail: 'it has no pages' };
    const boxes = pages.map(pageBox);
    return {
      ok: true,
      facts: { pages: boxes.map(roundedSize), formFields: formFields(doc, boxes) },
    };
  } catch (error) {
    return { ok: false, problem: 'damaged', detail: describe(error) };
  }
}

/**
 * The strict parse failed. An encrypted file often fails it too (its object streams do not
 * decode), so a lenient parse tells: it reads the trailer, which says whether the file is.
 */
async function classifyFailure(bytes: Uint8Array, strictError: unknown): Promise<PdfReading> {
  try {
    if ((await PDFDocument.load(bytes, LOAD)).isEncrypted) return ENCRYPTED;
  } catch {
    // Not even leniently: damaged, as the strict parse said.
  }
  return { ok: false, problem: 'damaged', detail: describe(strictError) };
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0].trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function pageBox(page: PDFPage): PageBox {
  return { box: page.getCropBox(), rotation: normalRotation(page.getRotation().angle) };
}

function roundedSize(page: PageBox): PageSize {
  const { width, height } = displayedSize(page);
  const round = (n: number) => Math.round(n * 100) / 100;
  return { width: round(width), height: round(height) };
}

/** The fields a person fills in: text, check box, radio group, choice. */
function formFields(doc: PDFDocument, boxes: PageBox[]): PdfFormField[] {
  const pageOf = widgetPages(doc);
  const fields: PdfFormField[] = [];
  for (const field of doc.getForm().getFields()) {
    const kind = fieldKind(field);
    // Read-only fields show their value in the page as drawn; nobody fills them.
    if (!kind || field.isReadOnly()) continue;
    const placed = visibleWidgets(doc, field, pageOf);
    if (placed.length === 0) continue;
    const page = placed[0].page;
    // A field has one place: its first visible widget, or for a radio group the box around all
    // of its buttons on that page.
    const onPage = kind.type === 'RADIO' ? placed.filter((w) => w.page === page) : [placed[0]];
    const rects = onPage.map((w) => pdfRectToDisplay(w.widget.getRectangle(), boxes[page]));
    const label = alternateName(field);
    fields.push({
      id: field.getName(),
      page: page + 1,
      rect: wholeRect(around(rects)),
      ...kind,
      ...(label ? { label } : {}),
    });
  }
  return fields;
}

function fieldKind(field: PDFField): Omit<PdfFormField, 'id' | 'page' | 'rect'> | undefined {
  if (field instanceof PDFTextField) {
    const value = field.getText();
    return { type: field.isMultiline() ? 'TEXTAREA' : 'TEXT', ...(value ? { value } : {}) };
  }
  if (field instanceof PDFCheckBox)
    return { type: field.isChecked() ? 'CHECKBOXCHECKED' : 'CHECKBOX' };
  if (field instanceof PDFRadioGroup) {
    const value = field.getSelected();
    return { type: 'RADIO', options: field.getOptions(), ...(value ? { value } : {}) };
  }
  if (field instanceof PDFDropdown || field instanceof PDFOptionList) {
    const options = field.getOptions();
    const value = field.getSelected()[0];
    // A choice with nothing to choose from is typed in (an editable combo box).
    if (options.length === 0) return { type: 'TEXT', ...(value ? { value } : {}) };
    return { type: 'SELECT', options, ...(value ? { value } : {}) };
  }
  // Push buttons and signature fields are not filled in.
  return undefined;
}

/**
 * The field's `/TU`, a text string. Not inherited: a kid widget's field is the one pdf-lib names.
 */
function alternateName(field: PDFField): string | undefined {
  const tu = field.acroField.dict.lookup(PDFName.of('TU'));
  if (!(tu instanceof PDFString || tu instanceof PDFHexString)) return undefined;
  let text: string;
  try {
    text = decodeTextString(tu.asBytes().subarray(0, LABEL_READ_BYTES));
  } catch {
    // An undecodable name labels nothing; the field is read without it.
    return undefined;
  }
  text = text.replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : text;
}

/** Enough of a text string for LABEL_READ_MAX characters in any of its encodings, and its mark. */
const LABEL_READ_BYTES = 4 * LABEL_READ_MAX + 3;

/**
 * A PDF text string's bytes as text: UTF-16BE or UTF-8 (PDF 2.0) after their byte order mark,
 * else PDFDocEncoding (pdf-lib's decodeText knows no UTF-8). A character cut at the end of the
 * bytes is left out.
 */
function decodeTextString(bytes: Uint8Array): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return new TextDecoder('utf-8').decode(bytes.subarray(3), { stream: true });
  if (hasUtf16BOM(bytes)) return utf16Decode(bytes.subarray(0, bytes.length & ~1));
  return pdfDocEncodingDecode(bytes);
}

/** Which page holds each widget annotation: the pages' /Annots, as /P is optional. */
function widgetPages(doc: PDFDocument): Map<PDFRef, number> {
  const pageOf = new Map<PDFRef, number>();
  doc.getPages().forEach((page, index) => {
    const annots = page.node.Annots();
    for (let i = 0; annots && i < annots.size(); i++) {
      const ref = annots.get(i);
      if (ref instanceof PDFRef) pageOf.set(ref, index);
    }
  });
  return pageOf;
}

function visibleWidgets(
  doc: PDFDocument,
  field: PDFField,
  pageOf: Map<PDFRef, number>,
): { widget: PDFWidgetAnnotation; page: number }[] {
  const pageRefs = doc.getPages().map((p) => p.ref);
  const placed: { widget: PDFWidgetAnnotation; page: number }[] = [];
  for (const widget of field.acroField.getWidgets()) {
    if (widget.hasFlag(AnnotationFlags.Hidden) || widget.hasFlag(AnnotationFlags.NoView)) continue;
    const { width, height } = widget.getRectangle();
    if (width === 0 || height === 0) continue;
    const ref = doc.context.getObjectRef(widget.dict);
    const byAnnots = ref ? pageOf.get(ref) : undefined;
    const byParent = pageRefs.indexOf(widget.P() as PDFRef);
    const page = byAnnots ?? (byParent >= 0 ? byParent : undefined);
    if (page !== undefined) placed.push({ widget, page });
  }
  return placed;
}

function around(rects: Rect[]): Rect {
  const x = Math.min(...rects.map((r) => r.x));
  const y = Math.min(...rects.map((r) => r.y));
  const right = Math.max(...rects.map((r) => r.x + r.width));
  const bottom = Math.max(...rects.map((r) => r.y + r.height));
  return { x, y, width: right - x, height: bottom - y };
}
