// The manifest's `documents`: PDF and image files of the pal folder with the fields, signatures and
// bookmarks placed on them, in the spec's JSON wire form (the generated Field, Signature and
// Bookmark schemas), less what the service fills in. Reference: docs/pal-format.md. What needs the
// files themselves (pages, sizes, the PDF's own form fields) is checked in pal-documents.ts.
import { FieldType } from '@pal-workflow/types';
import { zBookmark, zField, zSignature } from '@pal-workflow/validators';
import { z } from 'zod';
import { FIELD_INPUTS, TEXTAREA_INPUTS } from './field-inputs.js';
import { labelProblem } from './field-labels.js';
import { isInsideFolder, issueKey, text } from './manifest-values.js';

export const MAX_DOCUMENTS = 50;
export const MAX_FIELDS = 1000;
export const MAX_SIGNATURES = 100;
export const MAX_BOOKMARKS = 1000;
/** The longest field or signature id: it names a form control and a key of `input.values`. */
export const MAX_ID_LENGTH = 200;
/** Names the page's form uses itself (docs/pal-format.md), so no field may take them. */
export const RESERVED_FIELD_IDS: readonly string[] = ['action', 'csrf'];
export const SIGNATURE_CONTROL_PREFIX = 'signature.';
/** Far past any page (a PDF page is at most 14,400 points on a side, an image 10,000 pixels). */
const MAX_COORDINATE = 100_000;

export type DocumentKind = 'pdf' | 'png' | 'jpeg';

const EXTENSIONS: Record<string, DocumentKind> = {
  '.pdf': 'pdf',
  '.png': 'png',
  '.jpg': 'jpeg',
  '.jpeg': 'jpeg',
};

/** What a document's file name says it is, by its extension (any case); undefined: none of ours. */
export function documentKind(file: string): DocumentKind | undefined {
  const dot = file.lastIndexOf('.');
  return dot < 0 ? undefined : EXTENSIONS[file.slice(dot).toLowerCase()];
}

/** Why an id cannot name a field's form control, or undefined when it can. */
export function fieldIdProblem(id: string): string | undefined {
  if (id.length === 0) return 'must not be empty';
  if (id.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters`;
  if (RESERVED_FIELD_IDS.includes(id) || id.startsWith(SIGNATURE_CONTROL_PREFIX)) {
    return `"${id}" is a name the page's form uses itself (action, csrf, signature.…)`;
  }
  return undefined;
}

/** Why a `|`-separated list (roles, picklist) is not one, or undefined when it is. */
export function listProblem(list: string, what: string): string | undefined {
  const items = list.split('|');
  if (items.some((item) => item.trim() === '')) return `has an empty ${what} (between "|")`;
  if (items.some((item) => item !== item.trim())) {
    return `${what}s must not begin or end with spaces`;
  }
  const twice = items.find((item, i) => items.indexOf(item) !== i);
  return twice === undefined ? undefined : `names the ${what} "${twice}" twice`;
}

const fieldId = z.string().superRefine((id, ctx) => {
  const problem = fieldIdProblem(id);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const signatureId = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`);
const list = (what: string) =>
  z.string().superRefine((value, ctx) => {
    const problem = listProblem(value, what);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
const role = z
  .string()
  .regex(/^[^|\s](?:[^|]*[^|\s])?$/, 'expected one role name (no "|", no spaces around it)');
const page = z.int32().min(1, 'pages count from 1');
const coordinate = z
  .int32()
  .min(0, 'must not be negative (positions count from the top-left corner)')
  .max(MAX_COORDINATE, `must be at most ${MAX_COORDINATE}`);
const extent = z
  .int32()
  .min(1, 'must be at least 1')
  .max(MAX_COORDINATE, `must be at most ${MAX_COORDINATE}`);

const CHOICES: readonly FieldType[] = [FieldType.RADIO, FieldType.SELECT];
const CHECKBOXES: readonly FieldType[] = [FieldType.CHECKBOX, FieldType.CHECKBOXCHECKED];

/**
 * A field as the manifest gives it: the wire form, with palDefined true and type TEXT by default,
 * and two members of the manifest's own, kept with the document for its pages, never in the
 * Field: `label`, what a person reads beside it, and `input`, what kind of value it holds
 * (domain/field-inputs.ts).
 */
export const zManifestField = zField
  .extend({
    id: fieldId,
    label: z
      .string()
      .superRefine((value, ctx) => {
        const problem = labelProblem(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    input: z.enum(FIELD_INPUTS, { error: `expected one of ${FIELD_INPUTS.join(', ')}` }).optional(),
    roles: list('role').optional(),
    picklist: list('choice').optional(),
    type: zField.shape.type.unwrap().default(FieldType.TEXT),
    x: coordinate,
    y: coordinate,
    width: extent,
    height: extent,
    page,
    palDefined: z
      .literal(true, {
        error: "must be true or left out (false marks a PDF's own form fields, read at deploy)",
      })
      .default(true),
  })
  .superRefine((field, ctx) => {
    if (
      field.input !== undefined &&
      field.type !== FieldType.TEXT &&
      !(field.type === FieldType.TEXTAREA && TEXTAREA_INPUTS.includes(field.input))
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['input'],
        message:
          field.type === FieldType.TEXTAREA
            ? `a TEXTAREA field may be only ${TEXTAREA_INPUTS.join(', ')}; "${field.input}" is for TEXT fields`
            : `is only for TEXT and TEXTAREA fields, not ${field.type}`,
      });
    }
    const choice = CHOICES.includes(field.type);
    if (choice && field.picklist === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['picklist'],
        message: `is required for a ${field.type} field (its choices, separated by "|")`,
      });
    }
    if (!choice && field.picklist !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['picklist'],
        message: `is only for RADIO and SELECT fields, not ${field.type}`,
      });
    }
    if (field.value === undefined) return;
    if (
      choice &&
      field.picklist !== undefined &&
      !field.picklist.split('|').includes(field.value)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `"${field.value}" is not one of the picklist's choices`,
      });
    }
    if (CHECKBOXES.includes(field.type) && field.value !== 'true' && field.value !== 'false') {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `a ${field.type} field's value is "true" or "false"`,
      });
    }
  });

/** A signature as the manifest gives it: the wire form, unsigned (recordTime 0), optional by default. */
export const zManifestSignature = zSignature.extend({
  id: signatureId,
  role,
  required: z.boolean().default(false),
  recordTime: z
    .literal(0, { error: 'is set when the person signs: leave it out (or 0)' })
    .default(0),
  page,
  x: coordinate,
  y: coordinate,
  customWidth: extent,
  customHeight: extent,
});

/** A bookmark in the wire form; `mnemonic` (a keyboard shortcut, 0 for none) may be left out. */
export const zManifestBookmark = zBookmark.extend({
  mnemonic: zBookmark.shape.mnemonic.default(0),
});

export const zManifestDocument = z.strictObject({
  file: z
    .string()
    .refine(isInsideFolder, 'must be a path inside the pal folder')
    .refine(
      (file) => documentKind(file) !== undefined,
      'expected a .pdf, .png, .jpg or .jpeg file',
    ),
  description: text(4000).optional(),
  font: text(200).optional(),
  fields: z.array(zManifestField).max(MAX_FIELDS, `at most ${MAX_FIELDS} fields`).optional(),
  signatures: z
    .array(zManifestSignature)
    .max(MAX_SIGNATURES, `at most ${MAX_SIGNATURES} signatures`)
    .optional(),
  bookmarks: z
    .array(zManifestBookmark)
    .max(MAX_BOOKMARKS, `at most ${MAX_BOOKMARKS} bookmarks`)
    .optional(),
});

export type ManifestDocument = z.output<typeof zManifestDocument>;

/**
 * The manifest's documents: each file once, and field ids (and signature ids) unique across the
 * pal, since a page's form and a run's `input.values` hold the fields of every document by id.
 */
export const zManifestDocuments = z
  .array(zManifestDocument)
  .max(MAX_DOCUMENTS, `at most ${MAX_DOCUMENTS} documents`)
  .superRefine((documents, ctx) => {
    const seen = new Map<string, string>();
    /** Reports `value` when an earlier place (of the same kind) took it; `path` is the place. */
    const once = (kind: string, value: string, path: (string | number)[], message: string) => {
      const where = `${kind}\u0000${value}`;
      const first = seen.get(where);
      if (first === undefined) seen.set(where, issueKey(['documents', ...path.slice(0, -1)]));
      else
        ctx.addIssue({ code: 'custom', path, message: `"${value}" is already ${message}${first}` });
    };
    documents.forEach((document, d) => {
      once('file', document.file, [d, 'file'], '');
      document.fields?.forEach((field, f) => {
        once('field', field.id, [d, 'fields', f, 'id'], 'the id of ');
      });
      document.signatures?.forEach((signature, s) => {
        once('signature', signature.id, [d, 'signatures', s, 'id'], 'the id of ');
      });
    });
  });
