// A session page's posted form judged against what the person may do now (docs/entry.md, "The
// session form"): the action must be offered to them (else 403, nothing runs). Everything else
// that stops a form stops it before the run and brings the person back to the page with what they
// typed kept as a draft and a message saying what to change: a value that cannot be kept (a
// control character, one outside its choices), a signature that cannot be taken (not theirs, not
// a typed name or a real PNG within SIGNATURE_MAX_KB), a signature of their role that is missing
// and required or needed by the action (its `signatures`), a file that cannot be taken. Values
// for fields they may not edit are left out (the caller logs their ids, never the values). Pure:
// the caller reads the session's basis and the signer, and does what the verdict says.
import { createHash } from 'node:crypto';
import { checkPng } from '../documents/png-check.js';
import { sniffUpload, type UploadKind } from '../documents/upload-sniff.js';
import type { GivenSignature, StoredSignature } from './document-state.js';
import type { SessionBasisView } from './session-view.js';
import { COUNT, type DraftFile, type DraftSignature, type FormDraft } from './sessions.js';
import { FieldType } from '@pal-workflow/types';
import { isXmlText } from '@pal-workflow/validators';
import { SIGNATURE_CONTROL_PREFIX } from './pal-document-manifest.js';
import { MAX_NAME_LENGTH } from './validate.js';
import { cut, wholeSlice } from '../text-cut.js';
import type {
  DocumentSubmission,
  FieldWrite,
  UploadInfo,
  UploadWrite,
} from './transaction-documents.js';
import {
  documentsOpen,
  fieldEditable,
  fieldValueProblem,
  listItems,
  offeredAction,
  signatureIsMine,
  uploadAllowed,
} from './web-permissions.js';

/** The largest drawn signature's sides, in pixels: far past any signature pad. */
export const SIGNATURE_MAX_SIDE = 4000;
/**
 * The longest typed signature, in characters (code points): room for the longest name an SSO may
 * have (first and last name of MAX_NAME_LENGTH each, and a space), which the page's "Sign as …"
 * box posts as it is.
 */
export const TYPED_SIGNATURE_MAX = 2 * MAX_NAME_LENGTH + 1;
/** The longest value of one field, in characters (as `pal.documents.setField` allows). */
export const FIELD_VALUE_MAX = 65_536;
const DATA_URL = /^data:image\/png;base64,([A-Za-z0-9+/]*={0,2})$/;
const CONTROL_CHARACTERS = /\p{Cc}/u;
/**
 * What no value may keep: the characters XML cannot carry (isXmlText), which are the control
 * characters but tab and line breaks, lone surrogates and U+FFFE/U+FFFF.
 */
const NOT_XML_TEXT = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
/** In a typed name, every control character too (a tab or a line break is no part of one). */
const NOT_NAME_TEXT = /[^\u0020-\u007E\u00A0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Who signs, as the evidence page will say: from the SSO and the request, when signing. */
export interface Signer {
  sso: string | null;
  name: string | null;
  email: string | null;
  ipAddress: string;
  userAgent: string;
}

/** A file part of a multipart form (`upload.{name}`), read whole within UPLOAD_MAX_MB. */
export interface PostedFile {
  filename: string;
  bytes: Uint8Array;
  /**
   * Past UPLOAD_MAX_MB (this file, or the form's files together): its bytes were not kept, and
   * the page asks for a smaller one. The number is the cap in MiB ("MB" to the person, as the page's
   * hint says it).
   */
  overCapMb?: number;
  /** Past the cap only with the form's files before it (not alone). */
  together?: boolean;
  /** Kept from the session's last form that did not go through, not chosen in this one. */
  kept?: boolean;
}

export const UPLOAD_CONTROL_PREFIX = 'upload.';
const MAX_FILENAME = 200;

export type FormVerdict =
  | {
      kind: 'run';
      action: string;
      /** `input.values`: every field the person may edit, as submitted. */
      values: Record<string, string>;
      /** `input.signatures`. */
      signatures: GivenSignature[];
      /** `input.uploads`: the files of this form, described (no content). */
      uploads: UploadInfo[];
      submission: DocumentSubmission;
      draft: FormDraft;
      /** The form's files, to keep for the next submission if the run fails. */
      draftFiles: DraftFile[];
    }
  /** Nothing runs: the page says why (an action not offered to the person now). */
  | { kind: 'refused'; status: 403; message: string }
  /**
   * Nothing runs: the session page shows the messages and refills the form from the draft (a
   * value or signature that cannot be taken is kept there as near as it can be: see below).
   */
  | {
      kind: 'incomplete';
      action: string;
      messages: { message: string; type: string }[];
      draft: FormDraft;
      /** The files of the form that can be taken: kept for the next submission. */
      draftFiles: DraftFile[];
    };

export interface FormJudgement {
  verdict: FormVerdict;
  /** Ids of posted fields the person may not edit: left out, to be logged (never their values). */
  ignored: string[];
}

/**
 * Judges the posted fields (name → last value) for the person of `basis`. `now` dates the
 * signatures (Unix seconds). `notUtf8` names the controls of a multipart form whose bytes were
 * not UTF-8 (read with U+FFFD for each bad sequence): a value the person must look at again.
 */
export function judgeForm(
  basis: SessionBasisView,
  posted: Readonly<Record<string, string>>,
  signer: Signer,
  limits: { signatureMaxBytes: number },
  now: Date,
  files: Readonly<Record<string, PostedFile>> = {},
  notUtf8: ReadonlySet<string> = new Set(),
): FormJudgement {
  const ignored: string[] = [];
  const action = posted.action ?? '';
  const offered = offeredAction(basis.manifest.actions, basis.place, action);
  if (!offered)
    return {
      verdict: {
        kind: 'refused',
        status: 403,
        message:
          'This action is not offered to you now, and nothing was done. It may have been done already: by an earlier tap on its button, or in another tab. The page shows where things stand and what you can do.',
      },
      ignored,
    };
  /**
   * What stops the form before its run, in the page's order: each said once, and the person
   * brought back to the page with the rest of what they typed (a 400 page lost all of it).
   */
  const problems: { message: string; type: string }[] = [];

  const open = documentsOpen(basis.place);
  // Keyed by the pal's ids, which may be `__proto__`: maps without a prototype keep that one too.
  const draft: FormDraft = { values: record(), signatures: record() };
  const values = record<string>();
  const writes: FieldWrite[] = [];
  for (const [d, document] of basis.documents.entries()) {
    for (const field of document.fields) {
      const id = field.id;
      if (id === undefined) continue;
      const given = Object.hasOwn(posted, id) ? posted[id] : undefined;
      if (!fieldEditable(field, basis.place)) {
        if (given !== undefined) ignored.push(id);
        continue;
      }
      const checkbox =
        field.type === FieldType.CHECKBOX || field.type === FieldType.CHECKBOXCHECKED;
      // A browser posts a checked box's value ("true", or "on" when the control has none) and
      // nothing for an unchecked one.
      const value = checkbox
        ? given !== undefined && given !== 'false'
          ? 'true'
          : 'false'
        : given !== undefined
          ? // A browser posts a textarea's line breaks as CRLF, but counts each as one character
            // for its maxlength: kept as the textarea's own value has them (LF), the count is the
            // browser's, and a box it let the person fill is not refused as too long.
            given.replace(/\r\n?/g, '\n')
          : (basis.states[d]!.values[id] ?? '');
      // Said as "id: why", which the page shows beside the field's control (and in the list of
      // messages under its label); the draft holds what can be kept of the value, so that the
      // person corrects it there and retypes nothing.
      const wrong = (why: string, kept: string) => {
        problems.push({ message: `${id}: ${why}`, type: 'FIELD_REFUSED' });
        draft.values[id] = kept;
      };
      if (notUtf8.has(id)) {
        // Only a hand-made body: a browser sends its text as UTF-8.
        wrong(
          'what was sent for it was not all text (not UTF-8): each part that was not is shown as �. Check it and send the form again.',
          wholeSlice(value.replace(NOT_XML_TEXT, ''), FIELD_VALUE_MAX),
        );
        continue;
      }
      // As every operation's string (xs:string): a value XML cannot carry would be kept, then
      // refused in every XML and NameValue answer that holds it (T9 would fail for good). Such
      // characters are invisible in a box (U+0001, ESC) or shown as � (NUL): the page shows the
      // value without them, and the person sees what is left before anything runs with it.
      if (!isXmlText(value)) {
        const kept = value.replace(NOT_XML_TEXT, '');
        const removed = [...value].length - [...kept].length;
        wrong(
          removed === 1
            ? 'a character that cannot be kept (an invisible control character, which some pasted text brings along) was taken out of it: check it and send the form again.'
            : `${COUNT.format(removed)} characters that cannot be kept (invisible control characters, which some pasted text brings along) were taken out of it: check it and send the form again.`,
          wholeSlice(kept, FIELD_VALUE_MAX),
        );
        continue;
      }
      // A browser keeps to the control's maxlength: only a hand-made body is past it.
      if (value.length > FIELD_VALUE_MAX) {
        wrong(
          `it held more than ${COUNT.format(FIELD_VALUE_MAX)} characters, the most a field keeps: what was past them was cut off. Check its end and send the form again.`,
          wholeSlice(value, FIELD_VALUE_MAX),
        );
        continue;
      }
      const problem = fieldValueProblem(field, value);
      if (problem) {
        wrong(`${problem}: choose one and send the form again.`, value);
        continue;
      }
      values[id] = value;
      draft.values[id] = value;
      writes.push({ file: document.file, fieldId: id, value });
    }
  }

  const recordTime = Math.floor(now.getTime() / 1000);
  const signatures: StoredSignature[] = [];
  /** Missing signatures, by their document's file name (as the page's link to it shows it). */
  const missing: string[] = [];
  /** Those missing that the action needs (its `signatures`), not required for every action. */
  const missingForAction: string[] = [];
  const neededByAction = new Set(offered.signatures ?? []);
  const evidence = {
    name: signer.name,
    email: signer.email,
    ipAddress: signer.ipAddress,
    userAgent: signer.userAgent,
  };
  const known = new Set<string>();
  for (const [d, document] of basis.documents.entries()) {
    for (const signature of document.signatures) {
      const id = signature.id;
      if (id === undefined) continue;
      known.add(id);
      const control = `${SIGNATURE_CONTROL_PREFIX}${id}`;
      const posting = Object.hasOwn(posted, control) ? posted[control]!.trim() : '';
      const mine = signatureIsMine(signature, basis.place);
      const given = basis.states[d]!.signatures.some((s) => s.id === id);
      // Named as the page heads it (its description, else its file name), when there are more.
      const where = document.description ?? document.file.split('/').pop()!;
      // A person knows a signature by where it sits, not by the id the pal gave it.
      const named = `The signature on page ${signature.page ?? 1} of “${where}”`;
      if (posting === '') {
        if (mine && open && !given) {
          if (signature.required) missing.push(where);
          else if (neededByAction.has(id)) missingForAction.push(where);
        }
        continue;
      }
      // A signature that cannot be taken is said as the page's own messages are, and left out
      // of the draft (the page asks for it again), but a typed name kept without what it cannot
      // hold. Not the person's, or not open, or given: the page changed since it was shown
      // (another tab, another person's action), and shows now where things stand.
      const refusedSignature = (why: string) =>
        problems.push({ message: `${named} ${why}`, type: 'SIGNATURE_REFUSED' });
      if (!mine) {
        refusedSignature(`is for the role ${signature.role}, not yours: it was not taken.`);
        continue;
      }
      if (!open) {
        refusedSignature('can no longer be given: the documents are closed.');
        continue;
      }
      if (given) {
        refusedSignature('was already given (in another tab, or by an earlier tap).');
        continue;
      }
      if (notUtf8.has(control)) {
        refusedSignature('was not sent as text (not UTF-8): sign again.');
        continue;
      }
      const made = readSignature(posting, limits.signatureMaxBytes, signer.name);
      if (!made.ok) {
        refusedSignature(`${made.problem}: sign again.`);
        if (made.draft) draft.signatures[id] = made.draft;
        continue;
      }
      draft.signatures[id] = made.draft;
      signatures.push({
        id,
        file: document.file,
        role: signature.role!,
        sso: signer.sso,
        ...made.signature,
        recordTime,
        evidence,
      });
    }
  }
  // Never on a page: one message for them all, so that thousands of made-up names make one.
  const unknown = Object.keys(posted).filter(
    (name) =>
      name.startsWith(SIGNATURE_CONTROL_PREFIX) &&
      posted[name]!.trim() !== '' &&
      !known.has(name.slice(SIGNATURE_CONTROL_PREFIX.length)),
  );
  if (unknown.length > 0)
    problems.push({
      message: `There is no signature “${cut(unknown[0]!.slice(SIGNATURE_CONTROL_PREFIX.length), 200, 'name')}” here${unknown.length > 1 ? ` (nor ${COUNT.format(unknown.length - 1)} more the form named)` : ''}: nothing was signed with it.`,
      type: 'SIGNATURE_REFUSED',
    });

  const uploads: UploadWrite[] = [];
  const missingUploads: string[] = [];
  /** Files a person chose that cannot be taken (empty, or not of a kind asked for): why. */
  const wrongFiles: string[] = [];
  const asked = basis.manifest.uploads ?? [];
  const unasked = Object.keys(files).filter(
    (name) => !asked.some((u) => `${UPLOAD_CONTROL_PREFIX}${u.name}` === name),
  );
  if (unasked.length > 0)
    problems.push({
      message: `There is no upload “${cut(unasked[0]!.slice(UPLOAD_CONTROL_PREFIX.length), 200, 'name')}” here${unasked.length > 1 ? ` (nor ${COUNT.format(unasked.length - 1)} more the form named)` : ''}: no file was taken for it.`,
      type: 'UPLOAD_REFUSED',
    });
  for (const upload of asked) {
    const file = files[`${UPLOAD_CONTROL_PREFIX}${upload.name}`];
    const allowed = uploadAllowed(upload, basis.place);
    // A file input left empty posts a part without a name or bytes: no file.
    if (!file || (file.bytes.length === 0 && file.filename === '')) {
      if (allowed && upload.required && !basis.uploads.some((u) => u.name === upload.name))
        missingUploads.push(upload.label);
      continue;
    }
    if (!allowed) {
      wrongFiles.push(`“${upload.label}” is not yours to upload now: the file was not taken.`);
      continue;
    }
    if (file.overCapMb !== undefined) {
      wrongFiles.push(
        file.kept
          ? `The file kept from your last try for “${upload.label}”, ${cleanFilename(file.filename)}, does not fit beside the files chosen now (at most ${file.overCapMb} MB together): choose it again, or smaller files.`
          : file.together
            ? `The file for “${upload.label}” takes the files of this form past ${file.overCapMb} MB together: choose a smaller one.`
            : `The file for “${upload.label}” is larger than ${file.overCapMb} MB, the most a file may be: choose a smaller one.`,
      );
      continue;
    }
    // A person can choose any file (`accept` is a hint to the browser): a wrong one brings them
    // back to the page with what they typed, as a missing one does, not to a page of its own.
    if (file.bytes.length === 0) {
      wrongFiles.push(`The file for “${upload.label}” is empty: choose another.`);
      continue;
    }
    const sniffed = sniffUpload(file.bytes, listItems(upload.accept) as UploadKind[]);
    if (!sniffed.ok) {
      wrongFiles.push(`The file for “${upload.label}” ${sniffed.problem}: choose another.`);
      continue;
    }
    uploads.push({
      name: upload.name,
      filename: cleanFilename(file.filename),
      contentType: sniffed.contentType,
      size: file.bytes.length,
      digest: createHash('sha256').update(file.bytes).digest('base64'),
      sso: signer.sso,
      uploadedAt: now.toISOString(),
      content: file.bytes,
    });
  }

  const draftFiles = uploads.map(({ name, filename, content }) => ({ name, filename, content }));
  if (uploads.length > 0)
    draft.files = Object.fromEntries(
      uploads.map(({ name, filename, size }) => [
        name,
        { filename, size, keptAt: now.toISOString() },
      ]),
    );
  /** Why each missing signature is asked for, in the words after "your signature". */
  const unsigned = [
    ...unique(missing).map((where) =>
      basis.documents.length === 1 ? 'is required' : `in “${where}” is required`,
    ),
    ...unique(missingForAction)
      .filter((where) => !missing.includes(where))
      .map((where) =>
        basis.documents.length === 1
          ? `is needed for “${offered.label}”`
          : `in “${where}” is needed for “${offered.label}”`,
      ),
  ];
  if (
    problems.length > 0 ||
    unsigned.length > 0 ||
    missingUploads.length > 0 ||
    wrongFiles.length > 0
  )
    return {
      verdict: {
        kind: 'incomplete',
        action,
        messages: [
          ...problems,
          ...unsigned.map((why) => ({
            message: `Sign before you go on: your signature ${why}.`,
            type: 'SIGNATURE_REQUIRED',
          })),
          ...wrongFiles.map((message) => ({ message, type: 'UPLOAD_REFUSED' })),
          ...missingUploads.map((label) => ({
            message: `Upload “${label}” before you go on: it is required.`,
            type: 'UPLOAD_REQUIRED',
          })),
        ],
        draft,
        draftFiles,
      },
      ignored,
    };
  return {
    verdict: {
      kind: 'run',
      action,
      values,
      signatures: signatures.map(({ evidence: _evidence, ...given }) => given),
      uploads: uploads.map(({ content: _content, ...info }) => info),
      submission: { values: writes, signatures, uploads },
      draft,
      draftFiles,
    },
    ignored,
  };
}

/** The browser's file name, as a name only: no folders, no control characters, not too long. */
function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, MAX_FILENAME);
  return clean === '' ? 'upload' : clean;
}

type SignatureReading =
  | {
      ok: true;
      signature: Pick<GivenSignature, 'kind' | 'image' | 'text'>;
      draft: DraftSignature;
    }
  /** `draft`: what the page may show again (a typed name without what a name cannot hold). */
  | { ok: false; problem: string; draft?: DraftSignature };

/**
 * A posted signature: a `data:image/png;base64,…` URL of a real PNG, or a typed name. A person the service knows types no name: the page's "Sign as …"
 * box posts their own, and any other text would put in the signature's box a name that the
 * evidence page contradicts. Only an anonymous person (`ownName` null) types one.
 */
function readSignature(posted: string, maxBytes: number, ownName: string | null): SignatureReading {
  if (posted.startsWith('data:')) {
    const match = DATA_URL.exec(posted);
    if (!match)
      return { ok: false, problem: 'is not a PNG image (expected data:image/png;base64,…)' };
    const base64 = match[1]!;
    // The decoded size, known before decoding: refuse an oversized one without building it.
    if (Math.floor((base64.length * 3) / 4) > maxBytes + 2)
      return { ok: false, problem: `is larger than ${maxBytes / 1024} KiB (SIGNATURE_MAX_KB)` };
    const bytes = Buffer.from(base64, 'base64');
    if (bytes.length > maxBytes)
      return { ok: false, problem: `is larger than ${maxBytes / 1024} KiB (SIGNATURE_MAX_KB)` };
    const png = checkPng(bytes, SIGNATURE_MAX_SIDE);
    if (!png.ok) return { ok: false, problem: png.problem };
    return {
      ok: true,
      signature: { kind: 'DRAWN', image: bytes.toString('base64') },
      draft: { kind: 'DRAWN', image: posted },
    };
  }
  if (CONTROL_CHARACTERS.test(posted) || !isXmlText(posted)) {
    const kept = posted.replace(NOT_NAME_TEXT, '').trim();
    return {
      ok: false,
      problem:
        'held characters that are not part of a name (invisible control characters); they were taken out',
      ...(kept !== '' && ownName === null
        ? { draft: { kind: 'TYPED', text: wholeSlice(kept, TYPED_SIGNATURE_MAX * 2) } }
        : {}),
    };
  }
  if (ownName !== null && posted !== ownName.trim())
    return { ok: false, problem: `is signed with your own name, ${ownName.trim()}, or drawn` };
  if (posted.length > TYPED_SIGNATURE_MAX && [...posted].length > TYPED_SIGNATURE_MAX)
    return { ok: false, problem: `is longer than ${TYPED_SIGNATURE_MAX} characters` };
  return {
    ok: true,
    signature: { kind: 'TYPED', text: posted },
    draft: { kind: 'TYPED', text: posted },
  };
}

/** The items of a list, each once, in their first order. */
function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}

function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
