// The session page's HTML from a SessionView: controls by field type with the names the form
// posts, read-only fields that post nothing, signatures, buttons, the draft of a failed run, and
// escaping of everything a pal, a workflow or a person wrote.
import { FieldType } from '@pal-workflow/types';
import { describe, expect, it } from 'vitest';
import type { SessionField, SessionView } from '../domain/session-view.js';
import type { AssetUrls } from './assets.js';
import { labelFromId } from '../domain/field-labels.js';
import { renderSessionPage, roleTitle, statusText, type SessionPagePaths } from './session-page.js';

const PATHS: SessionPagePaths = {
  session: '/services/session/Ab12Cd34Ef56',
  document: (i) => `/services/session/Ab12Cd34Ef56/documents/${i}`,
  completed: (i) => `/services/session/Ab12Cd34Ef56/documents/${i}/completed`,
  upload: (name) => `/services/session/Ab12Cd34Ef56/uploads/${encodeURIComponent(name)}`,
};
const ASSETS: AssetUrls = {
  pdfjs: '/services/assets/pdfjs-1/pdf.min.mjs',
  pdfjsWorker: '/services/assets/pdfjs-1/pdf.worker.min.mjs',
  standardFonts: '/services/assets/pdfjs-1/standard_fonts/',
  signaturePad: '/services/assets/signature_pad-1/signature_pad.min.js',
  script: '/services/assets/page-x/session-page.js',
  stylesheet: '/services/assets/page-x/session-page.css',
};

function field(
  id: string,
  type: FieldType,
  value: string,
  editable = true,
  more: Partial<SessionField['field']> = {},
  label = labelFromId(id),
): SessionField {
  return {
    field: { id, type, x: 10, y: 20, width: 100, height: 20, page: 1, palDefined: true, ...more },
    label,
    value,
    editable,
  };
}

function view(over: Partial<SessionView> = {}): SessionView {
  return {
    pal: { id: 'claim', name: 'Claim <b>pal</b>' },
    transaction: {
      id: 't1',
      name: 'Claim <script>',
      status: 'NEW',
      systemStatus: 'OPEN',
    },
    console: false,
    person: { sso: 's1', name: 'Ada "A" Lovelace', role: 'participant' },
    csrf: 'tok"en',
    documentsOpen: true,
    documents: [
      {
        index: 0,
        file: 'documents/claim.pdf',
        contentType: 'application/pdf',
        pages: [{ width: 200, height: 400 }],
        digest: 'd',
        completed: false,
        fields: [
          field('name', FieldType.TEXT, 'x"><script>alert(1)</script>'),
          field('notes', FieldType.TEXTAREA, '</textarea><b>'),
          field('agree', FieldType.CHECKBOX, 'false'),
          field('policy', FieldType.CHECKBOXCHECKED, 'true'),
          field('kind', FieldType.RADIO, 'Meals', true, { picklist: 'Travel|Meals' }),
          field('country', FieldType.SELECT, '', true, { picklist: 'CH|DE' }),
          field('office', FieldType.TEXT, 'Zurich <HQ>', false),
        ],
        signatures: [
          {
            signature: {
              id: 'mine',
              role: 'participant',
              required: true,
              recordTime: 0,
              page: 1,
              x: 0,
              y: 300,
              customWidth: 100,
              customHeight: 50,
            },
            mine: true,
            required: true,
            neededFor: [],
          },
          {
            signature: {
              id: 'boss',
              role: 'owner',
              required: false,
              recordTime: 0,
              page: 1,
              x: 100,
              y: 300,
              customWidth: 100,
              customHeight: 50,
            },
            mine: false,
            required: false,
            neededFor: ['Approve'],
          },
        ],
      },
    ],
    actions: [
      { name: 'submit', label: 'Submit <now>' },
      { name: 'save', label: 'Save' },
    ],
    uploads: [],
    uploadMaxBytes: 10 * 1024 * 1024,
    outcome: null,
    draft: null,
    ...over,
  };
}

const html = (v: SessionView = view()) => renderSessionPage(v, PATHS, ASSETS);

describe('the session page', () => {
  it('names each control by its field id, by type', () => {
    const page = html();
    expect(page).toContain(
      'name="name" value="x&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;"',
    );
    expect(page).toMatch(
      /<textarea id="[^"]+" name="notes" rows="3" maxlength="65536">&#60;\/textarea&#62;&#60;b&#62;<\/textarea>/,
    );
    // A check box: a hidden "false" first, so that an unchecked box posts "false".
    expect(page).toMatch(
      /<input type="hidden" name="agree" value="false"><input type="checkbox" id="[^"]+" name="agree" value="true">/,
    );
    expect(page).toMatch(/name="policy" value="true" checked>/);
    expect(page).toMatch(/name="kind" value="Meals" checked>/);
    expect(page).toMatch(/name="kind" value="Travel">/);
    expect(page).toContain(
      '<option value="">Choose…</option><option value="CH">CH</option><option value="DE">DE</option>',
    );
    expect(page).toContain('name="csrf" value="tok&#34;en"');
  });

  it('shows a read-only field as its value, with no control that posts', () => {
    const page = html();
    expect(page).not.toContain('name="office"');
    expect(page).toContain('Zurich &#60;HQ&#62;');
    // On the drawn page too: a box the person fills in is marked, one they cannot shows its value.
    expect(page).toMatch(/<div class="marker field-marker" data-x="[^>]*><\/div>/);
    expect(page).toMatch(
      /<div class="marker field-marker shows-value" data-x="[^>]*>Zurich &#60;HQ&#62;<\/div>/,
    );
  });

  it('gives the person a pad and a box to sign with their name, and nothing for another role', () => {
    const page = html();
    expect(page).toContain(
      '<input type="hidden" class="signature-drawn" name="signature.mine" value="" disabled>',
    );
    // Known by name: nothing to type.
    expect(page).toMatch(
      /<input type="checkbox" class="signature-typed" id="[^"]+" name="signature.mine" value="Ada &#34;A&#34; Lovelace"( aria-required="true")?>/,
    );
    expect(page).toContain('Sign as <span class="typed-name">Ada &#34;A&#34; Lovelace</span>');
    expect(page).not.toContain('type="text" class="signature-typed"');
    expect(page).not.toContain('name="signature.boss"');
    expect(page).toContain('Signature of the person who started it');
  });

  it('says which buttons need a signature that is not required for every one', () => {
    const base = view();
    const [document] = base.documents;
    const [mine, boss] = document!.signatures;
    const needed = (neededFor: string[]) =>
      html(
        view({
          documents: [
            {
              ...document!,
              signatures: [{ ...mine!, required: false, neededFor }, boss!],
            },
          ],
        }),
      );
    expect(needed(['Approve <and sign>'])).toContain(
      '<legend>Your signature <span class="required">(required for “Approve &#60;and sign&#62;”)</span></legend>',
    );
    expect(needed(['Approve', 'Sign off'])).toContain('(required for “Approve” and “Sign off”)');
    // Documents no longer open (a completed transaction): nothing to sign, nothing said.
    const closed = html(
      view({
        documentsOpen: false,
        documents: [
          { ...document!, signatures: [{ ...mine!, required: false, neededFor: ['Approve'] }] },
        ],
      }),
    );
    expect(closed).not.toContain('required for');
    const optional = needed([]);
    expect(optional).toContain('<legend>Your signature</legend>');
    // Another role's signature is not the person's to give: what its buttons need is not said.
    expect(optional).not.toContain('“Approve”');
  });

  // Found by the Chromium probe: "Acme \u202Eevil corp is onboarded" read "Acme detlaborno si proc
  // live", and a file named with an override mirrored "(7 KB)." after it.
  it('shows what a person gave without direction overrides, file names isolated', () => {
    const page = html(
      view({
        outcome: {
          action: 'submit',
          ran: true,
          success: true,
          messages: [{ message: 'Acme \u202Eevil corp is onboarded \u2067x' }],
        },
        uploads: [
          {
            name: 'receipts',
            label: 'Receipts',
            accept: [],
            required: false,
            editable: true,
            draft: { filename: 'Quittung_\u202EFDP.exe.pdf', size: 7000 },
          },
        ],
      }),
    );
    expect(page).toContain('<li>Acme evil corp is onboarded x</li>');
    expect(page).toContain('Kept from your last try: <bdi>Quittung_FDP.exe.pdf</bdi> (7 KB).');
    expect(page).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
  });

  it('says in the window title that the last action was done, or not', () => {
    const outcome = (success: boolean) => ({
      action: 'submit',
      ran: true,
      success,
      messages: [],
    });
    const title = (page: string) => /<title>([^<]*)<\/title>/.exec(page)?.[1];
    expect(title(html(view({ outcome: outcome(true) })))).toMatch(/^Done: /);
    expect(title(html(view({ outcome: outcome(false) })))).toMatch(/^Not done: /);
    expect(title(html(view()))).not.toMatch(/done: /i);
  });

  it("leads the service's own messages to the signature or the file they ask for", () => {
    const page = html(
      view({
        outcome: {
          action: 'submit',
          ran: false,
          success: false,
          messages: [
            {
              message: 'Sign before you go on: your signature is required.',
              type: 'SIGNATURE_REQUIRED',
            },
            {
              message: 'Upload “Receipt” before you go on: it is required.',
              type: 'UPLOAD_REQUIRED',
            },
          ],
        },
        uploads: [
          { name: 'receipt', label: 'Receipt', accept: [], required: true, editable: true },
        ],
      }),
    );
    expect(page).toContain(
      '<li data-type="SIGNATURE_REQUIRED"><a href="#sign-mine">Sign before you go on: your signature is required.</a></li>',
    );
    expect(page).toContain('<fieldset class="signature mine" id="sign-mine"');
    expect(page).toContain(
      '<li data-type="UPLOAD_REQUIRED"><a href="#upload-0">Upload “Receipt” before you go on: it is required.</a></li>',
    );
    expect(page).toContain('<input type="file" id="upload-0"');
    // Two signatures, each needed by one button: the message of the pressed one leads to its own.
    const base = view();
    const [document] = base.documents;
    const [mine] = document!.signatures;
    const sig = (id: string, neededFor: string[]) => ({
      ...mine!,
      signature: { ...mine!.signature, id },
      required: false,
      neededFor,
    });
    const two = html(
      view({
        actions: [
          { name: 'reject', label: 'Reject' },
          { name: 'approve', label: 'Approve' },
        ],
        documents: [
          {
            ...document!,
            signatures: [sig('reject-sig', ['Reject']), sig('approve-sig', ['Approve'])],
          },
        ],
        outcome: {
          action: 'approve',
          ran: false,
          success: false,
          messages: [
            {
              message: 'Sign before you go on: your signature is needed for “Approve”.',
              type: 'SIGNATURE_REQUIRED',
            },
          ],
        },
      }),
    );
    expect(two).toContain('<a href="#sign-approve-sig">Sign before you go on');
  });

  it('links a file given to where it opens, and asks for none on a page where nothing can be given', () => {
    const given = {
      filename: 'Quittung März <1>.png',
      contentType: 'image/png',
      size: 2048,
      uploadedAt: '2026-11-25T12:00:00Z',
    };
    const page = html(
      view({
        uploads: [
          {
            name: 'receipts',
            label: 'Receipts',
            accept: [],
            required: true,
            editable: false,
            given,
          },
        ],
      }),
    );
    expect(page).toContain(
      'Uploaded: <a href="/services/session/Ab12Cd34Ef56/uploads/receipts" target="_blank" rel="noopener"><bdi>Quittung März &#60;1&#62;.png</bdi></a> (2 KB)',
    );
    expect(page).not.toContain('(required)</p>');
  });

  it('asks an anonymous person to type the name they sign with', () => {
    const base = view();
    const page = html(view({ person: { ...base.person, sso: null, name: null } }));
    expect(page).toMatch(
      /<input type="text" class="signature-typed" id="[^"]+" name="signature.mine" value="" maxlength="201" autocomplete="name"/,
    );
    expect(page).toContain('Type your full name to sign');
  });

  it('one button per action offered, none when none is', () => {
    expect(html()).toContain(
      '<button type="submit" name="action" value="submit" class="primary">Submit &#60;now&#62;</button>',
    );
    const none = html(view({ actions: [] }));
    expect(none).not.toContain('<button type="submit"');
    expect(none).toContain('There is nothing for you to do here now.');
  });

  it('refills the form with the draft of a failed run, and says what failed', () => {
    const page = html(
      view({
        outcome: {
          action: 'submit',
          ran: true,
          success: false,
          messages: [{ message: 'Amount <missing>', type: 'ERROR' }],
        },
        draft: {
          values: { name: 'Typed again', agree: 'true' },
          signatures: { mine: { kind: 'TYPED', text: 'Ada L.' } },
        },
      }),
    );
    expect(page).toContain('name="name" value="Typed again"');
    expect(page).toMatch(/name="agree" value="true" checked>/);
    // Signed by name before: the box is ticked again.
    expect(page).toMatch(/name="signature.mine" value="Ada &#34;A&#34; Lovelace" checked/);
    expect(page).toContain('“Submit &#60;now&#62;” failed');
    expect(page).toContain('Amount &#60;missing&#62;');
  });

  it('a draft read back from JSON without a field the pal named __proto__: the current value', () => {
    const base = view();
    const [document] = base.documents;
    const page = html(
      view({
        documents: [{ ...document!, fields: [field('__proto__', FieldType.TEXT, 'kept before')] }],
        draft: JSON.parse('{"values":{"other":"x"},"signatures":{}}') as SessionView['draft'],
      }),
    );
    expect(page).toContain('name="__proto__" value="kept before"');
  });

  it("names a finished action by its button's label, offered or not, and shows no message codes", () => {
    const page = html(
      view({
        actions: [],
        outcome: {
          action: 'submit',
          label: 'Submit the claim',
          ran: true,
          success: true,
          messages: [{ message: 'Submitted 12.50 for approval', type: 'INFO' }],
        },
      }),
    );
    expect(page).toContain('<h2>“Submit the claim” done</h2>');
    expect(page).toContain('<li data-type="INFO">Submitted 12.50 for approval</li>');
    expect(page).not.toContain('(INFO)');
  });

  it("ties a failed action's message about a field to that field: label, link, aria", () => {
    const failed = view({
      outcome: {
        action: 'submit',
        ran: true,
        success: false,
        messages: [
          { message: 'notes: say what was bought <and why>', type: 'INVALID_ARGUMENT' },
          { message: 'country: choose one', type: 'INVALID_ARGUMENT' },
          { message: 'office: not yours to change', type: 'INVALID_ARGUMENT' },
          { message: 'The claim system is down', type: 'WORKFLOW_ERROR' },
        ],
      },
    });
    const page = html(failed);
    // In the messages: the field's label, a link to its words under it.
    expect(page).toContain(
      '<li data-type="INVALID_ARGUMENT"><a href="#error-notes">Notes</a>: say what was bought &#60;and why&#62;</li>',
    );
    expect(page).toContain('<a href="#error-country">Country</a>: choose one');
    // A read-only field's id, and a message of no field, stay as they are.
    expect(page).toContain('<li data-type="INVALID_ARGUMENT">office: not yours to change</li>');
    expect(page).toContain('<li data-type="WORKFLOW_ERROR">The claim system is down</li>');
    // Under each control, its words; the control says it is in error and where to read why.
    expect(page).toMatch(
      /<textarea id="[^"]+" name="notes" rows="3" maxlength="\d+" aria-invalid="true" aria-describedby="error-notes">/,
    );
    expect(page).toContain(
      '<p class="field-error" id="error-notes">say what was bought &#60;and why&#62;</p>',
    );
    expect(page).toMatch(
      /<select id="[^"]+" name="country" aria-invalid="true" aria-describedby="error-country">/,
    );
    expect(page.match(/aria-invalid/g)).toHaveLength(2);
    // The same view rendered again places them again; a success ties nothing.
    expect(html(failed)).toContain('id="error-notes"');
    const done = view({ outcome: { ...failed.outcome!, success: true } });
    expect(html(done)).not.toContain('aria-invalid');
  });

  it("a mailed link's action, which no button names, is not named by its code", () => {
    const outcome = (success: boolean) =>
      html(
        view({
          actions: [],
          outcome: {
            action: 'review',
            ran: true,
            success,
            messages: [{ message: 'Check it', type: 'INFO' }],
          },
        }),
      );
    expect(outcome(true)).toContain('<h2>Messages</h2>');
    expect(outcome(false)).toContain('<h2>This step did not go through</h2>');
    expect(outcome(true) + outcome(false)).not.toContain('review');
  });

  it('an action whose module or export is missing is no error: the page just shows the pal', () => {
    const missing = { action: 'search', ran: false, success: true, messages: [] };
    const page = html(view({ actions: [{ name: 'search', label: 'Search' }], outcome: missing }));
    expect(page).toContain('<section id="outcome" class="outcome" aria-live="polite"></section>');
    expect(page).not.toContain('failure');
    expect(page).not.toContain('Search”');
    // A button the person pressed is answered, in words that say nothing failed.
    const pressed = html(
      view({
        actions: [{ name: 'search', label: 'Search' }],
        outcome: { ...missing, pressed: true },
      }),
    );
    expect(pressed).toContain(
      '<section id="outcome" class="outcome" aria-live="polite" tabindex="-1"><h2>Nothing was done for “Search”</h2></section>',
    );
  });

  it('links the completed PDF once it is written, and says it is coming until then', () => {
    expect(html()).not.toContain('/completed');
    const done = view();
    done.transaction = { ...done.transaction!, systemStatus: 'COMPLETED' };
    // The script asks for it (data-completed); without the script, the person reloads. The page
    // never reloads itself (axe-core's meta-refresh: a screen reader starts again at the top).
    expect(html(done)).toContain(
      '<span class="completed-pending" data-completed="/services/session/Ab12Cd34Ef56/documents/0/completed">The completed document (PDF) is being written: its link shows here in a few seconds (<a href="/services/session/Ab12Cd34Ef56">reload this page</a> if it does not).</span>',
    );
    expect(html(done)).not.toContain('http-equiv="refresh"');
    // Not for ever: two minutes after the transaction completed, the script asks no more.
    const late = structuredClone(done);
    late.transaction!.modifiedDate = '2026-11-26T10:00:00.000Z';
    late.now = '2026-11-26T10:02:01.000Z';
    expect(html(late)).not.toContain('data-completed=');
    expect(html(late)).toContain(
      'is not written yet: <a href="/services/session/Ab12Cd34Ef56">reload this page</a> later',
    );
    late.now = '2026-11-26T10:01:59.000Z';
    expect(html(late)).toContain('data-completed=');
    done.documents[0]!.completed = true;
    expect(html(done)).toContain('href="/services/session/Ab12Cd34Ef56/documents/0/completed"');
    expect(html(done)).not.toContain('being written');
  });

  it('links each page in full, for a phone whose picture of it is too small to read; the completed one once written', () => {
    expect(html()).toContain(
      '<p class="page-full"><a href="/services/session/Ab12Cd34Ef56/documents/0#page=1" target="_blank" rel="noopener">Read page 1 full size</a></p>',
    );
    const done = view();
    done.documents[0]!.completed = true;
    expect(html(done)).toContain(
      '<p class="page-full"><a href="/services/session/Ab12Cd34Ef56/documents/0/completed?view#page=1" target="_blank" rel="noopener">Read page 1 full size</a></p>',
    );
  });

  it('shows an image document as an <img> of its file; a PDF page is left to the script', () => {
    expect(html()).not.toContain('class="page-image"');
    const image = view();
    image.documents[0]!.contentType = 'image/png';
    expect(html(image)).toContain(
      '<img class="page-image" src="/services/session/Ab12Cd34Ef56/documents/0" alt="" width="200" height="400">',
    );
    expect(html(image)).toContain('data-kind="image"');
  });

  it("asks for the files of the manifest's uploads in a multipart form", () => {
    expect(html()).not.toContain('enctype=');
    const page = renderSessionPage(
      {
        ...view(),
        uploads: [
          {
            name: 'passport',
            label: 'Passport <scan>',
            accept: ['image/png', 'application/pdf'],
            required: true,
            editable: true,
          },
          {
            name: 'contract',
            label: 'Contract',
            accept: [],
            required: false,
            editable: false,
            given: {
              filename: 'c<1>.pdf',
              contentType: 'application/pdf',
              size: 2048,
              uploadedAt: 'x',
            },
          },
        ],
      },
      PATHS,
      ASSETS,
    );
    expect(page).toContain('enctype="multipart/form-data"');
    expect(page).toMatch(
      /<input type="file" id="upload-0" name="upload.passport" accept="image\/png,application\/pdf" aria-describedby="upload-0-hint" aria-required="true">/,
    );
    // What may be chosen is said before the choice: the kinds in words, and the cap.
    expect(page).toContain('<p class="hint" id="upload-0-hint">PNG or PDF, at most 10 MB.</p>');
    expect(page).toContain('data-max-bytes="10485760"');
    expect(page).toContain('Passport &#60;scan&#62;');
    expect(page).not.toContain('name="upload.contract"');
    expect(page).toContain(
      'Uploaded: <a href="/services/session/Ab12Cd34Ef56/uploads/contract" target="_blank" rel="noopener"><bdi>c&#60;1&#62;.pdf</bdi></a> (2 KB)',
    );
  });

  it('says that the cap holds for all the files of the page together when it asks for several', () => {
    const upload = (name: string, accept: string[]) => ({
      name,
      label: name,
      accept,
      required: false,
      editable: true,
    });
    const page = html(
      view({
        uploads: [upload('a', ['application/pdf', 'image/png', 'image/jpeg']), upload('b', [])],
        uploadMaxBytes: 1536 * 1024,
      }),
    );
    expect(page).toContain(
      '<p class="hint" id="upload-0-hint">PDF, PNG or JPEG, at most 1.5 MB (all files of this page together).</p>',
    );
    expect(page).toContain(
      '<p class="hint" id="upload-1-hint">At most 1.5 MB (all files of this page together).</p>',
    );
  });

  it("escapes another role's name on its signature box", () => {
    const base = view();
    const doc = base.documents[0]!;
    const page = html({
      ...base,
      documents: [
        {
          ...doc,
          signatures: doc.signatures.map((s) =>
            s.mine
              ? s
              : { ...s, signature: { ...s.signature, role: '<meta http-equiv="refresh">' } },
          ),
        },
      ],
    });
    expect(page).not.toContain('<meta http-equiv');
  });

  it('has no inline script or style', () => {
    const page = html();
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(page).not.toMatch(/<style|\sstyle=/);
  });
});

describe("a field's kind of value", () => {
  const withInput = (input: SessionField['input'], value: string, type = FieldType.TEXT) => {
    const base = view();
    const doc = base.documents[0]!;
    const field: SessionField = {
      field: { ...doc.fields[0]!.field, id: 'f', type },
      label: 'F',
      value,
      editable: true,
      ...(input ? { input } : {}),
    };
    return html(view({ documents: [{ ...doc, fields: [field], signatures: [] }] }));
  };
  const control = (page: string) => /<(input|textarea)[^>]*name="f"[^>]*>/.exec(page)![0];

  it('asks for the keyboard, the picker and the autofill that fit', () => {
    expect(control(withInput('email', ''))).toMatch(
      /^<input type="email" [^>]*autocomplete="email" spellcheck="false" autocapitalize="off"/,
    );
    expect(control(withInput('decimal', '12.40'))).toMatch(
      /^<input type="text" [^>]*inputmode="decimal"/,
    );
    expect(control(withInput('integer', ''))).toContain('inputmode="numeric"');
    expect(control(withInput('tel', ''))).toMatch(/^<input type="tel" [^>]*autocomplete="tel"/);
    expect(control(withInput('name', ''))).toContain(
      'autocomplete="name" spellcheck="false" autocapitalize="words"',
    );
    expect(control(withInput('date', '2026-11-28'))).toMatch(
      /^<input type="date" [^>]*value="2026-11-28"/,
    );
    expect(control(withInput('address', '', FieldType.TEXTAREA))).toMatch(
      /^<textarea [^>]*autocomplete="street-address"/,
    );
    expect(control(withInput(undefined, ''))).toMatch(
      /^<input type="text" id="[^"]+" name="f" value="" maxlength="\d+">$/,
    );
  });

  it('keeps a date that is not written YYYY-MM-DD in a text control, which shows it', () => {
    // A day the calendar lacks too: a date control would show it empty, and post it empty.
    expect(control(withInput('date', '2026-02-31'))).toMatch(/^<input type="text" /);
    const page = control(withInput('date', '28.11.2026'));
    expect(page).toMatch(
      /^<input type="text" [^>]*value="28.11.2026"[^>]*placeholder="YYYY-MM-DD"/,
    );
  });
});

describe('codes in words', () => {
  it('says the state beside the status in one line, and nothing of it while open', () => {
    const base = view();
    const statusOf = (status: string, systemStatus: string) =>
      /<dd id="status">([^<]*)<\/dd>/.exec(
        html(view({ transaction: { ...base.transaction!, status, systemStatus } })),
      )?.[1];
    expect(statusOf('SUBMITTED', 'OPEN')).toBe('Submitted');
    expect(statusOf('APPROVED', 'COMPLETED')).toBe('Approved (completed: the work on it is done)');
    expect(statusOf('SUBMITTED', 'EXPIRED')).toBe(
      'Submitted (expired: the time to finish it has passed)',
    );
    expect(statusOf('', 'CANCELLED')).toBe('Cancelled');
    expect(html()).not.toContain('<dt>State</dt>');
  });

  it("says a pal's status code in words, and leaves one the pal wrote in words", () => {
    expect(statusText('SUBMITTED')).toBe('Submitted');
    expect(statusText('IN_PROGRESS')).toBe('In progress');
    expect(statusText('NEW')).toBe('New');
    expect(statusText('OK')).toBe('OK');
    expect(statusText('HR_APPROVED')).toBe('HR approved');
    expect(statusText('Waiting for Morgan')).toBe('Waiting for Morgan');
    expect(statusText('approved')).toBe('approved');
    expect(statusText(undefined)).toBeUndefined();
  });

  it("says the roles every transaction has for a person, and the pal's own as words", () => {
    expect(roleTitle('owner')).toBe('Owner: you started it');
    expect(roleTitle('anonymous')).toBe('Guest');
    expect(roleTitle('participant')).toBe('Participant');
    expect(roleTitle('manager')).toBe('Manager');
    expect(roleTitle('cost_centre-lead')).toBe('Cost centre lead');
    // Not a prototype member's words.
    expect(roleTitle('constructor')).toBe('Constructor');
  });
});

describe('field labels', () => {
  it("shows the author's label beside the control, in a read-only field and in a message", () => {
    const labelled = (editable: boolean) =>
      field('vatId', FieldType.TEXT, 'CHE-1', editable, {}, 'VAT number <of the company>');
    const page = html(
      view({
        documents: [
          {
            ...view().documents[0]!,
            fields: [labelled(true), field('company', FieldType.TEXT, '')],
          },
        ],
        outcome: {
          action: 'submit',
          ran: true,
          success: false,
          messages: [{ message: 'vatId: not a VAT number', type: 'INVALID_ARGUMENT' }],
        },
      }),
    );
    expect(page).toMatch(/<label for="[^"]+">VAT number &#60;of the company&#62;<\/label>/);
    expect(page).toContain(
      '<a href="#error-vatId">VAT number &#60;of the company&#62;</a>: not a VAT number',
    );
    expect(page).toMatch(/<label for="[^"]+">Company<\/label>/);
    expect(page).not.toContain('Vat id');
    const readOnly = html(
      view({ documents: [{ ...view().documents[0]!, fields: [labelled(false)] }] }),
    );
    expect(readOnly).toContain(
      '<span class="field-label">VAT number &#60;of the company&#62;:</span>',
    );
  });

  it.each([
    ['employeeName', 'Employee name'],
    ['employee_name', 'Employee name'],
    ['claim.total', 'Claim total'],
    ['companyVAT', 'Company VAT'],
    ['IBAN', 'IBAN'],
  ])('without one, %s reads "%s"', (id, label) => expect(labelFromId(id)).toBe(label));
});
