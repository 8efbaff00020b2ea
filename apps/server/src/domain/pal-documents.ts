// A pal's documents (docs/pal-format.md): reading the files the manifest names at deploy (a PDF's
// pages and its own form fields, an image's size), checking every placement against them, and the
// model that is stored with the pal version: the spec's Document (its fields and signatures as
// the wire form) with what a later reader needs and cannot get from the wire form: the kind of
// file and the size of each page.
import { createHash } from 'node:crypto';
import type * as Wire from '@pal-workflow/types';
import { FieldType } from '@pal-workflow/types';
import { readImage } from '../documents/image-reader.js';
import { inspectPdf, type PdfInspection } from '../documents/pdf-inspection.js';
import type { PageSize, PdfFormField } from '../documents/pdf-reader.js';
import {
  findPalDocumentContent,
  findPalDocuments,
  type PalDocumentWrite,
} from '../storage/pal-documents.js';
import type { DomainContext } from './context.js';
import type { FieldInput } from './field-inputs.js';
import { cutLabel, readableLabel } from './field-labels.js';
import { NotFoundError } from './errors.js';
import type { ManifestIssue } from './manifest-values.js';
import {
  documentKind,
  fieldIdProblem,
  listProblem,
  type DocumentKind,
  type ManifestDocument,
} from './pal-document-manifest.js';

export type DocumentContentType = 'application/pdf' | 'image/png' | 'image/jpeg';

const CONTENT_TYPES: Record<DocumentKind, DocumentContentType> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpeg: 'image/jpeg',
};

/**
 * A document of a pal version, as stored. `fields` are the manifest's (palDefined true) followed
 * by the PDF's own form fields that the manifest does not name (palDefined false); signatures
 * are unsigned (recordTime 0). A transaction's values and signatures are kept with the
 * transaction, never here: this is what every transaction of the version starts from.
 */
export interface PalDocument {
  /** The path in the pal folder (`documents/claim.pdf`): the document's name. */
  file: string;
  contentType: DocumentContentType;
  /** SHA-256 of the file as deployed, base64. */
  digest: string;
  /** Bytes. */
  size: number;
  /** Each page as displayed: points for a PDF (crop box, turned by /Rotate), pixels for an image. */
  pages: PageSize[];
  description?: string;
  font?: string;
  fields: Wire.Field[];
  /**
   * What a person reads beside a field, by its id (domain/field-labels.ts): the manifest's
   * `label`, else the PDF field's alternate name. Fields without one are labelled from their id;
   * versions deployed before labels have none.
   */
  labels?: Record<string, string>;
  /** The kind of value a field holds, by its id, when the manifest says (its `input`). */
  inputs?: Record<string, FieldInput>;
  signatures: Wire.Signature[];
  bookmarks: Wire.Bookmark[];
}

/** A document read from the package: the model and the bytes. */
export interface PalDocumentFile {
  document: PalDocument;
  content: Uint8Array;
}

export interface DocumentLimits {
  /** The largest document file accepted (DOCUMENT_MAX_MB). */
  maxBytes: number;
}

/** The file's size against the cap, before anything reads it: undefined when it fits. */
function documentSizeProblem(
  file: string,
  size: number,
  limits: DocumentLimits,
): string | undefined {
  if (size <= limits.maxBytes) return undefined;
  return `file "${file}" is ${megabytes(size)}; at most ${megabytes(limits.maxBytes)} (DOCUMENT_MAX_MB)`;
}

/** In MiB, a fraction rounded up, so that a file just over the cap never reads as the cap. */
export function megabytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${Number.isInteger(mb) ? mb : (Math.ceil(mb * 10) / 10).toFixed(1)} MiB`;
}

/**
 * Reads the manifest's documents from the package's files and checks them; every problem is an
 * issue keyed in the manifest (`documents[0].fields[2]`), all of them together.
 */
export async function readPalDocuments(
  documents: readonly ManifestDocument[],
  contents: Readonly<Record<string, Uint8Array>>,
  limits: DocumentLimits,
  /**
   * What the folder holds but was not read: files too large (path → size), and files refused
   * (path → why, "is a link to a file outside the pal folder").
   */
  folder: {
    unreadSizes: Readonly<Record<string, number>>;
    refused: Readonly<Record<string, string>>;
  } = { unreadSizes: {}, refused: {} },
): Promise<{ documents: PalDocumentFile[]; issues: ManifestIssue[] }> {
  const issues: ManifestIssue[] = [];
  const read: Indexed[] = [];
  for (const [d, manifest] of documents.entries()) {
    const key = `documents[${d}]`;
    if (Object.hasOwn(folder.refused, manifest.file)) {
      issues.push({
        key: `${key}.file`,
        message: `file "${manifest.file}" ${folder.refused[manifest.file]}`,
      });
      continue;
    }
    const content = Object.hasOwn(contents, manifest.file) ? contents[manifest.file] : undefined;
    const size =
      content?.byteLength ??
      (Object.hasOwn(folder.unreadSizes, manifest.file)
        ? folder.unreadSizes[manifest.file]
        : undefined);
    if (size === undefined) {
      issues.push({
        key: `${key}.file`,
        message: `file "${manifest.file}" not found in the pal folder`,
      });
      continue;
    }
    const tooLarge = documentSizeProblem(manifest.file, size, limits);
    if (tooLarge || content === undefined) {
      issues.push({
        key: `${key}.file`,
        message: tooLarge ?? `file "${manifest.file}" cannot be read`,
      });
      continue;
    }
    const file = await readDocumentFile(manifest.file, content);
    if (!file.ok) {
      issues.push({ key: `${key}.file`, message: file.problem });
      continue;
    }
    const placed = placeDocument(key, manifest, file.pages, file.formFields, issues);
    read.push({
      index: d,
      document: {
        file: manifest.file,
        contentType: CONTENT_TYPES[documentKind(manifest.file)!],
        digest: createHash('sha256').update(content).digest('base64'),
        size: content.byteLength,
        pages: file.pages,
        ...(manifest.description !== undefined ? { description: manifest.description } : {}),
        ...(manifest.font !== undefined ? { font: manifest.font } : {}),
        ...placed,
        bookmarks: manifest.bookmarks ?? [],
      },
      content,
    });
  }
  issues.push(...formFieldIdClashes(read));
  return { documents: read.map(({ document, content }) => ({ document, content })), issues };
}

/** A document read, with its place in the manifest's list. */
type Indexed = PalDocumentFile & { index: number };

type FileReading =
  { ok: true; pages: PageSize[]; formFields: PdfFormField[] } | { ok: false; problem: string };

async function readDocumentFile(file: string, content: Uint8Array): Promise<FileReading> {
  const kind = documentKind(file)!;
  if (kind !== 'pdf') {
    const image = readImage(content, kind);
    return image.ok
      ? { ok: true, pages: [image.page], formFields: [] }
      : { ok: false, problem: `file "${file}" ${image.detail}` };
  }
  const pdf = await inspectPdf(content);
  return pdf.ok
    ? { ok: true, pages: pdf.facts.pages, formFields: pdf.facts.formFields }
    : { ok: false, problem: `file "${file}" ${pdfProblem(pdf)}` };
}

function pdfProblem(pdf: Exclude<PdfInspection, { ok: true }>): string {
  switch (pdf.problem) {
    case 'encrypted':
      return 'is encrypted (password-protected or restricted): deploy a copy saved without encryption';
    case 'damaged':
      return `is not a readable PDF (${pdf.detail})`;
    case 'too-costly':
      return `cannot be read: ${pdf.detail}`;
  }
}

/**
 * Checks the manifest's fields and signatures against the pages, and adds the PDF's own form
 * fields that the manifest does not name.
 */
function placeDocument(
  key: string,
  manifest: ManifestDocument,
  pages: readonly PageSize[],
  formFields: readonly PdfFormField[],
  issues: ManifestIssue[],
): {
  fields: Wire.Field[];
  labels?: Record<string, string>;
  inputs?: Record<string, FieldInput>;
  signatures: Wire.Signature[];
} {
  const unit = documentKind(manifest.file) === 'pdf' ? 'points' : 'pixels';
  const check = (where: string, what: string, box: Box) => {
    const problem = placementProblem(box, pages, manifest.file, unit);
    if (problem)
      issues.push({ key: `${where}${problem.member}`, message: `${what} ${problem.message}` });
  };

  const fields: Wire.Field[] = [];
  // Field ids are the pal's: no prototype for one named `__proto__` to reach.
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  // The manifest's label is checked readable and within the cap; a PDF's is cut to it.
  const label = (id: string, text: string | undefined) => {
    const readable = text === undefined ? undefined : readableLabel(text);
    if (readable !== undefined) labels[id] = cutLabel(readable);
  };
  const byId = new Map(formFields.map((f) => [f.id, f]));
  const inputs: Record<string, FieldInput> = Object.create(null) as Record<string, FieldInput>;
  for (const [f, { label: given, input, ...field }] of (manifest.fields ?? []).entries()) {
    check(`${key}.fields[${f}]`, `field "${field.id}"`, field);
    const own = byId.get(field.id);
    if (own) issues.push(...sameKindProblems(`${key}.fields[${f}]`, field, own));
    fields.push(field);
    label(field.id, given ?? own?.label);
    if (input !== undefined) inputs[field.id] = input;
  }
  const named = new Set(fields.map((f) => f.id));
  for (const own of formFields) {
    if (named.has(own.id)) continue;
    const field = fromFormField(own);
    const problem = formFieldProblem(own, field, pages, manifest.file);
    if (problem) {
      issues.push({ key: `${key}.file`, message: `the PDF's form field "${own.id}" ${problem}` });
    } else {
      fields.push(field);
      label(own.id, own.label);
    }
  }

  const signatures: Wire.Signature[] = [];
  for (const [s, signature] of (manifest.signatures ?? []).entries()) {
    check(`${key}.signatures[${s}]`, `signature "${signature.id}"`, {
      page: signature.page,
      x: signature.x,
      y: signature.y,
      width: signature.customWidth,
      height: signature.customHeight,
    });
    signatures.push(signature);
  }
  return {
    fields,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
    signatures,
  };
}

interface Box {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Where a box leaves its page, or undefined when it is inside. Pages are measured in fractions
 * (A4 is 595.28 × 841.89 points) and boxes in whole units, so a box may reach the page's size
 * rounded up.
 */
function placementProblem(
  box: Box,
  pages: readonly PageSize[],
  file: string,
  unit: string,
): { member: string; message: string } | undefined {
  const page = pages[box.page - 1];
  if (!page) {
    const count = pages.length === 1 ? '1 page' : `${pages.length} pages`;
    return { member: '.page', message: `is on page ${box.page}, but "${file}" has ${count}` };
  }
  const size = `page ${box.page} is ${page.width} × ${page.height} ${unit}`;
  if (box.x + box.width > Math.ceil(page.width)) {
    return {
      member: '',
      message: `reaches past the right edge of its page (x ${box.x} + width ${box.width} = ${box.x + box.width}; ${size})`,
    };
  }
  if (box.y + box.height > Math.ceil(page.height)) {
    return {
      member: '',
      message: `reaches past the bottom edge of its page (y ${box.y} + height ${box.height} = ${box.y + box.height}; ${size})`,
    };
  }
  return undefined;
}

function fromFormField(own: PdfFormField): Wire.Field {
  return {
    id: own.id,
    ...(own.value !== undefined ? { value: own.value } : {}),
    ...(own.options ? { picklist: own.options.join('|') } : {}),
    type: own.type as FieldType,
    x: own.rect.x,
    y: own.rect.y,
    width: own.rect.width,
    height: own.rect.height,
    page: own.page,
    palDefined: false,
  };
}

/** Why a PDF's own form field cannot become a Field as it is; the manifest may name it instead. */
function formFieldProblem(
  own: PdfFormField,
  field: Wire.Field,
  pages: readonly PageSize[],
  file: string,
): string | undefined {
  const idProblem = fieldIdProblem(own.id);
  if (idProblem) return `cannot be a field: its name ${idProblem}`;
  if (own.options?.some((o) => o.includes('|'))) {
    return 'has a choice with "|" in it, which a picklist cannot hold: name it in the manifest\'s fields';
  }
  if (field.picklist !== undefined) {
    const problem = listProblem(field.picklist, 'choice');
    if (problem) return `${problem}: name it in the manifest's fields`;
  }
  const placed = placementProblem(field, pages, file, 'points');
  if (placed) {
    return `${placed.message}: name it in the manifest's fields to place it`;
  }
  return undefined;
}

const SAME_KIND: Record<PdfFormField['type'], readonly FieldType[]> = {
  TEXT: [FieldType.TEXT, FieldType.TEXTAREA],
  TEXTAREA: [FieldType.TEXT, FieldType.TEXTAREA],
  CHECKBOX: [FieldType.CHECKBOX, FieldType.CHECKBOXCHECKED],
  CHECKBOXCHECKED: [FieldType.CHECKBOX, FieldType.CHECKBOXCHECKED],
  RADIO: [FieldType.RADIO],
  SELECT: [FieldType.SELECT],
};

/**
 * A manifest field that names one of the PDF's own fields stands in for it (its place, roles,
 * type), and its value is written into that field when the document is completed: so it must be
 * of the same kind, and offer only choices the PDF's field has.
 */
function sameKindProblems(key: string, field: Wire.Field, own: PdfFormField): ManifestIssue[] {
  const type = field.type ?? FieldType.TEXT;
  if (!SAME_KIND[own.type].includes(type)) {
    return [
      {
        key: `${key}.type`,
        message: `the PDF's form field "${own.id}" is ${own.type}, which a ${type} field cannot fill (use ${SAME_KIND[own.type].join(' or ')})`,
      },
    ];
  }
  const foreign = (field.picklist?.split('|') ?? []).filter((c) => !own.options?.includes(c));
  if (own.options && foreign.length > 0) {
    return [
      {
        key: `${key}.picklist`,
        message: `"${foreign[0]}" is not a choice of the PDF's form field "${own.id}" (${own.options.join('|')})`,
      },
    ];
  }
  return [];
}

/**
 * The PDF's own form fields join the manifest's ids, which are unique across the pal: a form
 * field with the id of a field of another document is refused (the manifest may name it).
 */
function formFieldIdClashes(read: readonly Indexed[]): ManifestIssue[] {
  const owner = new Map<string, Indexed>();
  for (const entry of read) {
    for (const field of entry.document.fields) if (field.palDefined) owner.set(field.id!, entry);
  }
  const issues: ManifestIssue[] = [];
  for (const entry of read) {
    for (const field of entry.document.fields) {
      if (field.palDefined) continue;
      const first = owner.get(field.id!);
      if (first === undefined) {
        owner.set(field.id!, entry);
      } else {
        issues.push({
          key: `documents[${entry.index}].file`,
          message: `the PDF's form field "${field.id}" has the id of a field of documents[${first.index}] ("${first.document.file}"); field ids are unique across a pal`,
        });
      }
    }
  }
  return issues;
}

/** Rows for storage/pal-documents.ts. */
export function documentRows(documents: readonly PalDocumentFile[]): PalDocumentWrite[] {
  return documents.map(({ document, content }, position) => ({
    position,
    file: document.file,
    digest: document.digest,
    document: JSON.stringify(document),
    content,
  }));
}

/**
 * The spec's Document (PalFile) of a stored document: `filename` is its path in the pal folder,
 * `digest` the SHA-256 as deployed; `content` (base64) only when the bytes are given.
 */
export function toWireDocument(document: PalDocument, content?: Uint8Array): Wire.Document {
  return {
    ...(content ? { content: Buffer.from(content).toString('base64') } : {}),
    contentType: document.contentType,
    filename: document.file,
    digest: document.digest,
    ...(document.bookmarks.length > 0 ? { bookmarks: document.bookmarks } : {}),
    ...(document.description !== undefined ? { description: document.description } : {}),
    ...(document.font !== undefined ? { font: document.font } : {}),
    fields: document.fields,
    signatures: document.signatures,
  };
}

/** The documents of one pal version, in the manifest's order (no bytes). */
export async function getPalDocuments(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<PalDocument[]> {
  const rows = await findPalDocuments(ctx.db, enterpriseId, palId, version);
  return rows.map((row) => JSON.parse(row) as PalDocument);
}

/** One document of a pal version with its bytes; 404 when the version has no such file. */
export async function getPalDocumentFile(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  version: number,
  file: string,
): Promise<PalDocumentFile> {
  const row = await findPalDocumentContent(ctx.db, enterpriseId, palId, version, file);
  if (!row) throw NotFoundError.of('pal document', `${palId}@${version}/${file}`);
  return {
    document: JSON.parse(row.document) as PalDocument,
    content: new Uint8Array(row.content),
  };
}
