// The session page (docs/web-mode.md): what a person fills in and signs, rendered on the server
// from the page's data, escaped, and complete without JavaScript. Each document's pages come in
// order; on each page its fields (a labelled control, or the value when the person may not edit
// it) and its signatures. The page's script (assets/session-page.js) draws the pages with pdf.js,
// places the fields where they sit on a wide screen, and turns each signature of the person into
// a drawing pad; without it the same form posts the same names, with a typed signature.
import { isCalendarDay } from '../calendar-days.js';
import { escapeHtml, escapePersonText } from '../html.js';
import { inputAttributes, type FieldInput } from '../domain/field-inputs.js';
import { FIELD_VALUE_MAX, TYPED_SIGNATURE_MAX } from '../domain/form-submission.js';
import type { SystemStatus } from '../domain/transaction-lifecycle.js';
import type { AssetUrls } from './assets.js';
import type {
  SessionDocument,
  SessionField,
  SessionSignature,
  SessionUpload,
  SessionView,
} from '../domain/session-view.js';

/** Where the page's links and form point. */
export interface SessionPagePaths {
  /** The session page: the form posts here. */
  session: string;
  /** `…/session/{handle}/documents/{index}`: a document's file. */
  document(index: number): string;
  /** `…/session/{handle}/documents/{index}/completed`: its completed PDF, once the view says it is written. */
  completed(index: number): string;
  /** `…/session/{handle}/uploads/{name}`: the file kept for an upload. */
  upload(name: string): string;
}

/** The whole HTML of the session page. */
export function renderSessionPage(
  sessionView: SessionView,
  paths: SessionPagePaths,
  assets: AssetUrls,
): string {
  const view = pageView(sessionView);
  const title = titleOf(view);
  // The window's title is what a screen reader says first on the page the form led back to, and
  // what a tab shows: that the form did not go through, before the name.
  // A success is said too: the page after the form's 303 is a new page, whose live region is
  // already full when it loads, so a screen reader would not read it out.
  const shown = shownOutcome(view);
  const windowTitle =
    shown?.success === false ? `Not done: ${title}` : shown?.ran ? `Done: ${title}` : title;
  const uploads = view.uploads;
  // A file is only sent by a multipart form; without one the form stays urlencoded.
  const enctype = uploads.some((u) => u.editable) ? ' enctype="multipart/form-data"' : '';
  const form = `<form method="post" action="${attr(paths.session)}" id="session-form"${enctype} novalidate>
<input type="hidden" name="csrf" value="${attr(view.csrf)}">
${view.documents.map((d) => documentSection(view, d, paths)).join('\n')}
${uploadSection(uploads, view.uploadMaxBytes, paths)}
${actionBar(view)}
</form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(windowTitle)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${attr(assets.stylesheet)}">
<script type="module" src="${attr(assets.script)}"></script>
</head><body>
<main id="session" data-pdfjs="${attr(assets.pdfjs)}" data-pdfjs-worker="${attr(assets.pdfjsWorker)}" data-standard-fonts="${attr(assets.standardFonts)}" data-signature-pad="${attr(assets.signaturePad)}">
<header class="heading">
<h1>${escapeHtml(title)}</h1>
${summary(view)}
</header>
${outcomeRegion(view)}
${form}
</main></body></html>`;
}

function attr(text: string): string {
  return escapeHtml(text);
}

/** The transaction's name, else the pal's. */
function titleOf(view: Pick<SessionView, 'transaction' | 'pal'>): string {
  return view.transaction?.name ?? view.pal.name ?? view.pal.id;
}

/**
 * A transaction's systemStatus as a person reads it after its business status, "Approved
 * (completed: the work on it is done)": the API's codes mean nothing to them, and a second row
 * beside "Status" left them to guess the difference. Open says nothing the status does not.
 */
const STATE_TEXT: Record<SystemStatus, string | undefined> = {
  OPEN: undefined,
  COMPLETED: 'completed: the work on it is done',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired: the time to finish it has passed',
  ARCHIVED: 'archived',
};

/** The transaction's business status, and its state when that is not simply open. */
function statusLine(transaction: SessionView['transaction']): string | undefined {
  if (transaction === undefined) return undefined;
  const { status, systemStatus } = transaction;
  const state = Object.hasOwn(STATE_TEXT, systemStatus)
    ? STATE_TEXT[systemStatus as SystemStatus]
    : systemStatus.toLowerCase();
  const business = statusText(status);
  if (state === undefined) return business;
  return business ? `${business} (${state})` : state.charAt(0).toUpperCase() + state.slice(1);
}

/**
 * A business status as a person reads it: the pal's codes (`SUBMITTED`, `IN_REVIEW`) in words
 * ("Submitted", "In review"); a status the pal wrote in words stays as it is.
 */
export function statusText(status: string | undefined): string | undefined {
  if (status === undefined || !/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(status)) return status;
  // A word of one or two letters is more likely an abbreviation (OK, HR) than a word, but for
  // the small words a status is made of.
  const words = status
    .split('_')
    .map((word) => (word.length <= 2 && !SMALL_WORDS.has(word) ? word : word.toLowerCase()))
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const SMALL_WORDS = new Set([
  'A',
  'IN',
  'ON',
  'TO',
  'OF',
  'BY',
  'AT',
  'NO',
  'OR',
  'IS',
  'AS',
  'UP',
  'BE',
]);

/** The roles every transaction has (the others are the pal's own words, as `manager`). */
const ROLE_WORDS: Record<string, { title: string; whose: string }> = {
  owner: { title: 'Owner: you started it', whose: 'the person who started it' },
  participant: { title: 'Participant', whose: 'a participant' },
  anonymous: { title: 'Guest', whose: 'a guest' },
};

/** A role as the "Your role" line says it: "Manager", "Owner: you started it". */
export function roleTitle(role: string): string {
  if (Object.hasOwn(ROLE_WORDS, role)) return ROLE_WORDS[role]!.title;
  const words = role.replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Whose a role's signature is: "the manager", "the person who started it"; no role: anyone's. */
function roleName(role: string | undefined): string {
  if (!role) return 'anyone';
  if (Object.hasOwn(ROLE_WORDS, role)) return ROLE_WORDS[role]!.whose;
  return `the ${role.replace(/[-_]+/g, ' ').trim()}`;
}

function consoleRole(profile: 'enterprise' | 'personal' | null | undefined): string {
  return profile === 'enterprise'
    ? "console user, with the enterprise's profile"
    : profile === 'personal'
      ? 'console user, with your own profile'
      : 'console user';
}

function summary(view: SessionView): string {
  const t = view.transaction;
  const rows: [string, string, string | null | undefined][] = [
    ['description', 'Description', t ? t.description : view.pal.description],
    ['status', 'Status', statusLine(t)],
    ['console', 'Console', view.console ? 'this pal in console mode' : undefined],
    // In a console session, the role is the console grant's profile it entered under.
    [
      'your-role',
      'Your role',
      view.console
        ? consoleRole(view.person.profile)
        : view.person.role === null
          ? undefined
          : roleTitle(view.person.role),
    ],
    ['signed-in-as', 'You are', view.person.name],
  ];
  const items = rows
    .filter((r): r is [string, string, string] => typeof r[2] === 'string' && r[2] !== '')
    .map(([id, label, value]) => `<dt>${label}</dt><dd id="${id}">${escapeHtml(value)}</dd>`)
    .join('');
  return items ? `<dl class="summary">${items}</dl>` : '';
}

/** The last action's outcome when the page says it (an entry's is not always worth a word). */
function shownOutcome(view: SessionView): SessionView['outcome'] {
  const outcome = view.outcome;
  if (
    !outcome ||
    // A missing module or export is no error: the page just shows the pal or transaction. (An
    // entry's action is the client's choice, not the person's; a button's is said below.)
    (!outcome.ran && outcome.success && !outcome.pressed) ||
    (!outcome.ran && outcome.action === 'enter') ||
    (outcome.action === 'enter' && outcome.messages.length === 0)
  )
    return null;
  return outcome;
}

/** The workflow's answer to the last action; an empty live region when there is none yet. */
function outcomeRegion(view: PageView): string {
  const outcome = shownOutcome(view);
  if (!outcome) return '<section id="outcome" class="outcome" aria-live="polite"></section>';
  const buttonLabel = outcome.label ?? view.actions.find((a) => a.name === outcome.action)?.label;
  const label = buttonLabel ?? outcome.action;
  const heading = !outcome.ran
    ? outcome.success
      ? // A button whose export the pal does not have: nothing happened, and nothing failed.
        `Nothing was done for “${escapeHtml(label)}”`
      : // Stopped before its run: a missing required signature or upload (the messages say which).
        `“${escapeHtml(label)}” needs more from you`
    : // The entry's own, or a mailed link's (no button names it): its name is the pal's code.
      outcome.action === 'enter' || buttonLabel === undefined
      ? outcome.success
        ? 'Messages'
        : 'This step did not go through'
      : outcome.success
        ? `“${escapeHtml(label)}” done`
        : `“${escapeHtml(label)}” failed`;
  // A message's type is a code for programs (INFO, INVALID_ARGUMENT): it stays in the markup,
  // for styles and scripts, and out of the text a person reads. One about a field the person
  // may edit ("amount: a sum such as 120.50") names it by its label and links to it, where the
  // same words stand under the control.
  const errors = view.fieldErrors;
  const messages = outcome.messages
    .map((m) => {
      const type = m.type ? ` data-type="${attr(m.type)}"` : '';
      const tied = aboutField(m.message, errors);
      // "The receipts are attached.: upload them" would read oddly: a label's closing stop gives
      // way to the colon.
      const fieldLabel = tied ? view.fieldLabels.get(tied.fieldId)!.replace(/[.:]$/, '') : '';
      const colon = /[?!]$/.test(fieldLabel) ? '' : ':';
      // The service's own (a signature or a file it stopped the form for) lead to what they ask.
      const place = !tied && !outcome.ran ? placeAskedFor(view, m) : undefined;
      const text = tied
        ? `<a href="#${errorId(tied.fieldId)}">${escapeHtml(fieldLabel)}</a>${colon} ${escapePersonText(tied.text)}`
        : place
          ? `<a href="#${place}">${escapePersonText(m.message)}</a>`
          : escapePersonText(m.message);
      return `<li${type}>${text}</li>`;
    })
    .join('');
  const kind = outcome.success ? (outcome.ran ? ' success' : '') : ' failure';
  return `<section id="outcome" class="outcome${kind}" aria-live="polite" tabindex="-1"><h2>${heading}</h2>${messages ? `<ul>${messages}</ul>` : ''}</section>`;
}

/**
 * Where the person gives what a message of the service asks for, as the id of its control: the
 * first of their signatures still to give (in the document the message names, when there are
 * several), or the upload whose label it quotes.
 */
function placeAskedFor(
  view: PageView,
  { message, type }: { message: string; type?: string | null },
): string | undefined {
  if (type === 'SIGNATURE_REQUIRED') {
    // The pressed action's: a signature another button needs is not the one asked for.
    const pressed = view.actions.find((a) => a.name === view.outcome?.action)?.label;
    const documents = view.documents.filter(
      (d) =>
        view.documents.length === 1 || message.includes(`“${d.description ?? fileName(d.file)}”`),
    );
    const asked = documents
      .flatMap((d) => d.signatures)
      .find(
        (s) =>
          s.mine &&
          !s.given &&
          (s.required || (pressed !== undefined && s.neededFor.includes(pressed))),
      );
    return asked && view.documentsOpen ? signatureAnchor(asked.signature.id!) : undefined;
  }
  if (type === 'SIGNATURE_REFUSED') {
    // "The signature on page 2 of “Claim” …": the person's own there, still to give.
    const refused = view.documents
      .filter((d) => message.includes(`“${d.description ?? fileName(d.file)}”`))
      .flatMap((d) => d.signatures)
      .find(
        (s) =>
          s.mine &&
          !s.given &&
          message.startsWith(`The signature on page ${s.signature.page ?? 1} `),
      );
    return refused && view.documentsOpen ? signatureAnchor(refused.signature.id!) : undefined;
  }
  if (type === 'UPLOAD_REQUIRED' || type === 'UPLOAD_REFUSED') {
    const n = view.uploads.findIndex((u) => u.editable && message.includes(`“${u.label}”`));
    return n >= 0 ? `upload-${n}` : undefined;
  }
  return undefined;
}

/** The id of the person's signature block of a signature. */
function signatureAnchor(signatureId: string): string {
  return `sign-${idPart(signatureId)}`;
}

/** A completed transaction's PDF whose completed copy is not written yet (it is, off the commit). */
function completedPdfPending(view: SessionView, doc: SessionDocument): boolean {
  return (
    view.transaction?.systemStatus === 'COMPLETED' &&
    doc.contentType === 'application/pdf' &&
    !doc.completed
  );
}

/**
 * How long the page reloads itself for a completed PDF: a few seconds are usual, and a PDF that
 * could not be written at all (or a transaction completed before completed PDFs existed) must not
 * keep a page reloading for ever.
 */
const COMPLETED_PDF_WAIT_MS = 120_000;

function stillAwaited(view: SessionView): boolean {
  const since = Date.parse(view.transaction?.modifiedDate ?? '');
  const now = Date.parse(view.now ?? '');
  return Number.isNaN(since) || Number.isNaN(now) || now - since < COMPLETED_PDF_WAIT_MS;
}

function documentSection(view: PageView, doc: SessionDocument, paths: SessionPagePaths): string {
  const name = doc.description ?? doc.file;
  const heading = `doc-${doc.index}-title`;
  const links = [
    // Once the completed PDF is written, "Open" shows it (filled in and signed), not the blank form.
    doc.completed
      ? `<a href="${attr(`${paths.completed(doc.index)}?view`)}" target="_blank" rel="noopener">Open the completed ${escapeHtml(fileName(doc.file))}</a>`
      : `<a href="${attr(paths.document(doc.index))}" target="_blank" rel="noopener">Open ${escapeHtml(fileName(doc.file))}</a>`,
    ...(doc.completed
      ? [
          `<a href="${attr(paths.completed(doc.index))}" class="completed-download" download>Download the completed document (PDF)</a>`,
        ]
      : completedPdfPending(view, doc)
        ? [
            // The script asks whether it is written and shows the page again once it is; a page
            // that reloaded itself (a meta refresh) took a screen reader back to its top every
            // few seconds. Without the script, the person reloads it.
            stillAwaited(view)
              ? `<span class="completed-pending" data-completed="${attr(paths.completed(doc.index))}">The completed document (PDF) is being written: its link shows here in a few seconds (<a href="${attr(paths.session)}">reload this page</a> if it does not).</span>`
              : `<span class="completed-pending">The completed document (PDF) is not written yet: <a href="${attr(paths.session)}">reload this page</a> later.</span>`,
          ]
        : []),
  ];
  const pages = doc.pages.map((size, p) => pageBlock(view, doc, p + 1, size, paths)).join('\n');
  return `<section class="document" aria-labelledby="${heading}">
<h2 id="${heading}">${escapeHtml(name)}</h2>
<p class="document-links">${links.join(' ')}</p>
${pages}
</section>`;
}

function fileName(file: string): string {
  return file.slice(file.lastIndexOf('/') + 1);
}

function pageBlock(
  view: PageView,
  doc: SessionDocument,
  page: number,
  size: { width: number; height: number },
  paths: SessionPagePaths,
): string {
  const fields = doc.fields
    .filter((f) => f.field.page === page && f.field.id !== undefined)
    .sort((a, b) => readingOrder(a.field, b.field));
  const signatures = doc.signatures
    .filter((s) => s.signature.page === page && s.signature.id !== undefined)
    .sort((a, b) => readingOrder(a.signature, b.signature));
  const label = `Page ${page} of ${doc.pages.length}`;
  const isImage = doc.contentType !== 'application/pdf';
  // The picture of the page: an image document's own file; a PDF's page is drawn by the script
  // into a canvas it adds here.
  const picture = isImage
    ? `<img class="page-image" src="${attr(paths.document(doc.index))}" alt="" width="${size.width}" height="${size.height}">`
    : '';
  // What the page shows of its boxes once it is drawn: where each field sits (on a phone, whose
  // controls are listed under the page) and each signature, with a drawn one's image. A box the
  // person fills in is marked to be filled; one they cannot change shows its value, as the
  // completed document will (empty yellow boxes on a submitted claim looked like work left).
  const fieldMarkers = fields
    .map(({ field: f, editable, value }) => {
      const where = box(size, f.x, f.y, f.width, f.height);
      if (editable) return `<div class="marker field-marker"${where}></div>`;
      if (isCheckbox(f.type ?? 'TEXT'))
        return `<div class="marker field-marker shows-value tick"${where}>${value === 'true' ? '✓' : ''}</div>`;
      return `<div class="marker field-marker shows-value"${where}>${escapeHtml(value)}</div>`;
    })
    .join('');
  const signatureMarkers = signatures
    .map(({ signature: s, given, mine }) => {
      const mark = given
        ? given.kind === 'DRAWN' && given.image
          ? `<img src="data:image/png;base64,${attr(given.image)}" alt="">`
          : `<span class="typed-preview">${escapeHtml(given.text ?? '')}</span>`
        : `<span>${mine && view.documentsOpen ? 'Sign here' : escapeHtml(`For ${roleName(s.role)}`)}</span>`;
      return `<div class="marker signature-marker"${box(size, s.x, s.y, s.customWidth, s.customHeight)} data-marker="${attr(s.id!)}">${mark}</div>`;
    })
    .join('');
  // Once written, the completed PDF is the page as it now reads: filled in and signed.
  const fullSize = isImage
    ? paths.document(doc.index)
    : doc.completed
      ? `${paths.completed(doc.index)}?view#page=${page}`
      : `${paths.document(doc.index)}#page=${page}`;
  const id = `doc-${doc.index}-page-${page}`;
  return `<section class="page" id="${id}" aria-labelledby="${id}-title" data-document="${doc.index}" data-page="${page}" data-kind="${isImage ? 'image' : 'pdf'}" data-src="${attr(paths.document(doc.index))}" data-width="${size.width}" data-height="${size.height}">
<h3 id="${id}-title" class="page-title">${label}</h3>
<div class="page-body"><div class="sheet" aria-hidden="true">${picture}<div class="markers">${fieldMarkers}${signatureMarkers}</div></div>
<p class="page-full"><a href="${attr(fullSize)}" target="_blank" rel="noopener">Read page ${page} full size</a></p>
<div class="fields">${fields.map((f, n) => fieldBlock(view, f, `${id}-f${n}`, size)).join('\n')}</div></div>
${signatures.length > 0 ? `<div class="signatures">${signatures.map((s, n) => signatureBlock(view, s, `${id}-s${n}`)).join('\n')}</div>` : ''}
</section>`;
}

/** Top to bottom, then left to right: the order a person reads a page, and the tab order. */
function readingOrder(a: { y: number; x: number }, b: { y: number; x: number }): number {
  return a.y - b.y || a.x - b.x;
}

/** Where a box sits on its page, as fractions the script turns into CSS percentages. */
function box(
  size: { width: number; height: number },
  x: number,
  y: number,
  width: number,
  height: number,
): string {
  const pct = (part: number, whole: number) => ((part / whole) * 100).toFixed(3);
  return ` data-x="${pct(x, size.width)}" data-y="${pct(y, size.height)}" data-w="${pct(width, size.width)}" data-h="${pct(height, size.height)}"`;
}

function fieldBlock(
  view: PageView,
  { field, label: text, value: current, editable, input }: SessionField,
  id: string,
  size: { width: number; height: number },
): string {
  const type = field.type ?? 'TEXT';
  const fieldId = field.id!;
  const label = escapeHtml(text);
  const where = box(size, field.x, field.y, field.width, field.height);
  const ticked = !editable && isCheckbox(type) && current === 'true';
  // A ticked read-only box shows a tick where it sits on the page: its "Yes" does not fit there.
  const cls = `field field-${type.toLowerCase()}${editable ? '' : ' readonly'}${ticked ? ' ticked' : ''}`;
  if (!editable) {
    const shown = isCheckbox(type) ? (ticked ? 'Yes' : 'No') : current;
    // "Receipts attached: Yes", but "The receipts are attached.: Yes" would read oddly.
    const colon = /[.:?!]$/.test(text) ? '' : ':';
    return `<div class="${cls}"${where}><span class="field-label">${label}${colon}</span> <span class="field-value">${shown === '' ? '<span class="empty">(empty)</span>' : escapeHtml(shown)}</span></div>`;
  }
  const name = attr(fieldId);
  // The draft is read back from JSON: only its own keys (a field may be named `__proto__`).
  const draft = view.draft;
  const value =
    (draft && Object.hasOwn(draft.values, fieldId) ? draft.values[fieldId] : undefined) ?? current;
  const labelled = `<label for="${id}">${label}</label>`;
  // Its error's words stand under the first control of that id (ids are unique on a page).
  const error = view.unshownErrors.delete(fieldId) ? view.fieldErrors.get(fieldId) : undefined;
  // The control says it is in error, and which words say why (read with its label). The words
  // stand between the label and the control, so that the messages' link to them leads the
  // keyboard on to the control.
  const invalid = error ? ` aria-invalid="true" aria-describedby="${errorId(fieldId)}"` : '';
  const errorText = error
    ? `<p class="field-error" id="${errorId(fieldId)}">${escapeHtml(error)}</p>`
    : '';
  const block = (head: string, control: string) =>
    `<div class="${cls}${error ? ' invalid' : ''}"${where}>${head}${errorText}${control}</div>`;
  switch (type) {
    case 'TEXTAREA':
      return block(
        labelled,
        `<textarea id="${id}" name="${name}" rows="3" maxlength="${FIELD_VALUE_MAX}"${hints(input, value)}${invalid}>${escapeHtml(value)}</textarea>`,
      );
    case 'CHECKBOX':
    case 'CHECKBOXCHECKED': {
      // An unchecked box posts nothing: the hidden "false" before it is what the form then sends.
      const checked = value === 'true' ? ' checked' : '';
      return block(
        '',
        `<input type="hidden" name="${name}" value="false"><input type="checkbox" id="${id}" name="${name}" value="true"${checked}${invalid}>${labelled}`,
      );
    }
    case 'RADIO': {
      const options = choices(field)
        .map(
          (choice, n) =>
            `<span class="choice"><input type="radio" id="${id}-${n}" name="${name}" value="${attr(choice)}"${choice === value ? ' checked' : ''}><label for="${id}-${n}">${escapeHtml(choice)}</label></span>`,
        )
        .join('');
      return `<fieldset class="${cls}${error ? ' invalid' : ''}"${where}${invalid}><legend>${label}</legend>${errorText}<input type="hidden" name="${name}" value="">${options}</fieldset>`;
    }
    case 'SELECT': {
      const list = choices(field);
      const blank = list.includes(value) ? '' : '<option value="">Choose…</option>';
      const options = list
        .map(
          (choice) =>
            `<option value="${attr(choice)}"${choice === value ? ' selected' : ''}>${escapeHtml(choice)}</option>`,
        )
        .join('');
      return block(
        labelled,
        `<select id="${id}" name="${name}"${invalid}>${blank}${options}</select>`,
      );
    }
    default:
      return block(
        labelled,
        `<input type="${inputType(input, value)}" id="${id}" name="${name}" value="${attr(value)}" maxlength="${FIELD_VALUE_MAX}"${hints(input, value)}${invalid}>`,
      );
  }
}

/**
 * The control's type for the field's kind. A date control shows only an ISO date: a value in
 * another form (typed before the field said it is a date, or set by the workflow) keeps a text
 * control, which shows it, rather than one that would show it empty and post it empty.
 */
function inputType(input: FieldInput | undefined, value: string): string {
  const type = inputAttributes(input).type ?? 'text';
  return type === 'date' && value !== '' && !isCalendarDate(value) ? 'text' : type;
}

/** YYYY-MM-DD of a day the calendar has (a date control shows 2026-02-31 empty). */
function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  return match !== null && isCalendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** The keyboard, autofill and spelling hints of the field's kind, as attributes. */
function hints(input: FieldInput | undefined, value: string): string {
  const a = inputAttributes(input);
  return [
    a.inputmode ? ` inputmode="${a.inputmode}"` : '',
    a.autocomplete ? ` autocomplete="${a.autocomplete}"` : '',
    a.spellcheck === false ? ' spellcheck="false"' : '',
    a.autocapitalize ? ` autocapitalize="${a.autocapitalize}"` : '',
    // A date shown as text says the form it wants.
    input === 'date' && inputType(input, value) === 'text' ? ' placeholder="YYYY-MM-DD"' : '',
  ].join('');
}

/** The session's view as one rendering of its page uses it. */
interface PageView extends SessionView {
  /**
   * The failed action's messages about a field the person may edit, by field id: a message
   * "fieldId: why" (the form workflows.md suggests) whose id is such a field's.
   */
  fieldErrors: ReadonlyMap<string, string>;
  /** The labels of the fields the person may edit, by field id. */
  fieldLabels: ReadonlyMap<string, string>;
  /** Those no control has shown yet: each is shown by the first control of its field. */
  unshownErrors: Set<string>;
}

function pageView(view: SessionView): PageView {
  const fieldErrors = new Map<string, string>();
  // The fields the person may edit, by id, with their labels (the first of an id on the page).
  const fieldLabels = new Map<string, string>();
  for (const { field, label } of view.documents.flatMap((d) =>
    d.fields.filter((f) => f.editable),
  )) {
    if (!fieldLabels.has(field.id!)) fieldLabels.set(field.id!, label);
  }
  const outcome = view.outcome;
  if (outcome && !(outcome.ran && outcome.success)) {
    for (const m of outcome.messages) {
      const tied = aboutField(m.message, fieldLabels);
      if (tied && !fieldErrors.has(tied.fieldId)) fieldErrors.set(tied.fieldId, tied.text);
    }
  }
  return { ...view, fieldErrors, fieldLabels, unshownErrors: new Set(fieldErrors.keys()) };
}

function aboutField(
  message: string,
  fields: ReadonlySet<string> | ReadonlyMap<string, string>,
): { fieldId: string; text: string } | undefined {
  const colon = message.indexOf(': ');
  if (colon <= 0) return undefined;
  const fieldId = message.slice(0, colon);
  return fields.has(fieldId) ? { fieldId, text: message.slice(colon + 2) } : undefined;
}

/**
 * A pal's id (a field's, a signature's) as part of an HTML id: each character but the safe ones as
 * `.{hex}.`, closed so that no two ids meet ("\u00ab" and "\nb" did).
 */
function idPart(palId: string): string {
  return palId.replace(/[^A-Za-z0-9_-]/g, (c) => `.${c.charCodeAt(0).toString(16)}.`);
}

/** The id of a field's error text. */
function errorId(fieldId: string): string {
  return `error-${idPart(fieldId)}`;
}

function isCheckbox(type: string): boolean {
  return type === 'CHECKBOX' || type === 'CHECKBOXCHECKED';
}

function choices(field: SessionField['field']): string[] {
  return (field.picklist ?? '').split('|').filter((c) => c !== '');
}

function signatureBlock(
  view: SessionView,
  { signature, mine, required: isRequired, neededFor, given }: SessionSignature,
  id: string,
): string {
  const sigId = signature.id!;
  // Needed by some of the buttons only ("Approve and sign", not "Return"): said with their labels.
  const required = isRequired
    ? ' <span class="required">(required)</span>'
    : mine && view.documentsOpen && neededFor.length > 0
      ? ` <span class="required">(required for ${neededFor.map((label) => `“${escapeHtml(label)}”`).join(' and ')})</span>`
      : '';
  const whose = mine ? 'Your signature' : `Signature of ${escapeHtml(roleName(signature.role))}`;
  const legend = `${whose}${required}`;
  if (given) {
    const when = new Date(given.recordTime * 1000).toISOString().replace('T', ' ').slice(0, 16);
    const mark =
      given.kind === 'DRAWN' && given.image
        ? `<img class="signature-image" src="data:image/png;base64,${attr(given.image)}" alt="${attr(`Signature of ${given.signerName ?? roleName(signature.role)}`)}">`
        : `<span class="typed-signature"><bdi>${escapePersonText(given.text ?? '')}</bdi></span>`;
    const by = given.signerName ? ` by ${escapeHtml(given.signerName)}` : '';
    const title = mine
      ? whose
      : given.signerName
        ? `Signature of ${escapeHtml(given.signerName)}`
        : whose;
    return `<div class="signature given" data-signature="${attr(sigId)}"><p class="signature-title">${title}</p>${mark}<p class="signed-at">Signed${by}, <span class="nowrap">${when} UTC</span></p></div>`;
  }
  if (!mine || !view.documentsOpen)
    return `<div class="signature awaiting" data-signature="${attr(sigId)}"><p class="signature-title">${legend}</p><p>Not signed yet.</p></div>`;
  const name = attr(`signature.${sigId}`);
  const draft =
    view.draft && Object.hasOwn(view.draft.signatures, sigId)
      ? view.draft.signatures[sigId]
      : undefined;
  const drawn = draft?.kind === 'DRAWN' ? draft.image : '';
  const typed = draft?.kind === 'TYPED' ? draft.text : '';
  // The drawn form is filled and enabled by the script only. Without it, a person the service
  // knows signs with their name by ticking a box (nobody types a name the service has); only an
  // anonymous person types one.
  const person = view.person.name;
  const byName = person
    ? `<label class="sign-as"><input type="checkbox" class="signature-typed" id="${id}-typed" name="${name}" value="${attr(person)}"${typed !== '' ? ' checked' : ''}${isRequired ? ' aria-required="true"' : ''}> <span class="typed-label">Sign as <span class="typed-name">${escapeHtml(person)}</span></span></label>`
    : `<label for="${id}-typed" class="typed-label">Type your full name to sign</label>
<input type="text" class="signature-typed" id="${id}-typed" name="${name}" value="${attr(typed)}" maxlength="${TYPED_SIGNATURE_MAX}" autocomplete="name"${isRequired ? ' aria-required="true"' : ''}>`;
  return `<fieldset class="signature mine" id="${signatureAnchor(sigId)}" data-signature="${attr(sigId)}"${isRequired ? ' data-required' : ''}>
<legend>${legend}</legend>
<div class="pad" hidden><canvas class="pad-canvas" id="${id}-pad" aria-label="Draw your signature here with a mouse, a finger or a pen"></canvas><p class="pad-hint" aria-hidden="true">Draw with a mouse, a finger or a pen.</p><button type="button" class="pad-clear">Clear</button></div>
<input type="hidden" class="signature-drawn" name="${name}" value="${attr(drawn)}" disabled>
${byName}
</fieldset>`;
}

/** How a person names each kind of file a pal may ask for. */
const KIND_NAMES: Record<string, string> = {
  'application/pdf': 'PDF',
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
};

function uploadSection(
  uploads: readonly SessionUpload[],
  maxBytes: number,
  paths: SessionPagePaths,
): string {
  if (uploads.length === 0) return '';
  const choosable = uploads.filter((u) => u.editable).length;
  const items = uploads.map((u, n) => {
    const id = `upload-${n}`;
    // Said while it can still be given; on a page where nothing can be, it would read as a demand.
    const required = u.required && u.editable ? ' <span class="required">(required)</span>' : '';
    // The file opens in the browser: whoever checks the transaction sees what was given.
    const given = u.given
      ? `<p class="upload-given">Uploaded: <a href="${attr(paths.upload(u.name))}" target="_blank" rel="noopener"><bdi>${escapePersonText(u.given.filename)}</bdi></a> (${kilobytes(u.given.size)})</p>`
      : '';
    if (!u.editable)
      return `<div class="upload readonly"><p class="field-label">${escapeHtml(u.label)}${required}</p>${given || '<p class="empty">None uploaded.</p>'}</div>`;
    // Chosen in the last try, which did not go through: the browser forgot it, the service did not.
    const kept = u.draft
      ? `<p class="upload-draft" id="${id}-draft">Kept from your last try: <bdi>${escapePersonText(u.draft.filename)}</bdi> (${kilobytes(u.draft.size)}). It is sent with this form; choose another file to send that one instead.</p>`
      : '';
    const accept = u.accept.length > 0 ? ` accept="${attr(u.accept.join(','))}"` : '';
    // Said before the file is chosen: on a phone, a photo is often larger than the cap.
    const kinds = listInWords(u.accept.map((type) => KIND_NAMES[type] ?? type));
    const cap = `at most ${kilobytes(maxBytes)}${choosable > 1 ? ' (all files of this page together)' : ''}.`;
    const hint = kinds ? `${kinds}, ${cap}` : `A${cap.slice(1)}`;
    const describedBy = u.draft ? `${id}-draft ${id}-hint` : `${id}-hint`;
    const stillRequired = u.required && !u.given && !u.draft;
    return `<div class="upload field"><label for="${id}">${escapeHtml(u.label)}${required}</label>${given}${kept}<p class="hint" id="${id}-hint">${escapeHtml(hint)}</p><input type="file" id="${id}" name="${attr(`upload.${u.name}`)}"${accept} aria-describedby="${describedBy}"${stillRequired ? ' aria-required="true"' : ''}></div>`;
  });
  // "to upload" only while there is something the person may upload.
  const heading = choosable > 0 ? 'Files to upload' : 'Files';
  return `<section class="uploads document" aria-labelledby="uploads-title" data-max-bytes="${maxBytes}"><h2 id="uploads-title">${heading}</h2>${items.join('\n')}</section>`;
}

/** "A", "A or B", "A, B or C". */
function listInWords(words: readonly string[]): string {
  return words.length < 2
    ? (words[0] ?? '')
    : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** A size as a person reads it: "120 KB", "1.5 MB", "10 MB" (as the page's script writes it). */
function kilobytes(size: number): string {
  const kb = Math.round(size / 1024);
  if (kb < 1024) return `${Math.max(1, kb)} KB`;
  return `${(Math.round((size * 10) / (1024 * 1024)) / 10).toFixed(1).replace(/\.0$/, '')} MB`;
}

function actionBar(view: SessionView): string {
  if (view.actions.length === 0)
    return '<p class="no-actions">There is nothing for you to do here now.</p>';
  const buttons = view.actions
    .map(
      (a, n) =>
        `<button type="submit" name="action" value="${attr(a.name)}"${n === 0 ? ' class="primary"' : ''}>${escapeHtml(a.label)}</button>`,
    )
    .join('');
  return `<div class="actions">${buttons}</div>`;
}
