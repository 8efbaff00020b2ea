import { FieldType } from '@pal-workflow/types';
import { describe, expect, it } from 'vitest';
import { png } from '../../test/documents.js';
import { judgeForm, type Signer, FIELD_VALUE_MAX } from './form-submission.js';
import type { PalDocument } from './pal-documents.js';
import { parsePalManifest } from './pal-manifest.js';
import type { SessionBasisView } from './session-view.js';

const DOCUMENT: PalDocument = {
  file: 'documents/a.pdf',
  contentType: 'application/pdf',
  digest: 'x',
  size: 1,
  pages: [{ width: 600, height: 800 }],
  fields: [
    {
      id: 'name',
      type: FieldType.TEXT,
      x: 0,
      y: 0,
      width: 10,
      height: 10,
      page: 1,
      palDefined: true,
    },
    {
      id: 'agree',
      type: FieldType.CHECKBOX,
      x: 0,
      y: 0,
      width: 10,
      height: 10,
      page: 1,
      palDefined: true,
    },
    { id: 'salary', roles: 'hr', x: 0, y: 0, width: 10, height: 10, page: 1, palDefined: true },
  ],
  signatures: [
    {
      id: 'me',
      role: 'owner',
      required: true,
      recordTime: 0,
      page: 1,
      x: 0,
      y: 0,
      customWidth: 10,
      customHeight: 10,
    },
  ],
  bookmarks: [],
};

function basis(status = 'NEW'): SessionBasisView {
  return {
    manifest: parsePalManifest(
      { id: 'p', actions: { transaction: [{ name: 'send', label: 'Send', statuses: 'NEW' }] } },
      'pal.json',
    ),
    documents: [DOCUMENT],
    states: [
      { file: DOCUMENT.file, values: { name: 'Ada', agree: 'false', salary: '1' }, signatures: [] },
    ],
    uploads: [],
    place: { role: 'owner', transaction: { status, systemStatus: 'OPEN' } },
    transaction: undefined,
    pal: { id: 'p' },
  };
}

const SIGNER: Signer = {
  sso: 's',
  name: 'Ada L',
  email: 'a@x.test',
  ipAddress: '::1',
  userAgent: 'ua',
};
const NOW = new Date('2026-11-25T12:00:00Z');
const judge = (posted: Record<string, string>, b = basis()) =>
  judgeForm(b, posted, SIGNER, { signatureMaxBytes: 10 * 1024 }, NOW);

describe('judgeForm', () => {
  it('takes the editable fields, leaves out and names the others, and dates the signature', () => {
    const { verdict, ignored } = judge({
      action: 'send',
      agree: 'on',
      salary: '1000000',
      'signature.me': '  Ada L ',
    });
    expect(ignored).toEqual(['salary']);
    expect(verdict).toMatchObject({
      kind: 'run',
      action: 'send',
      values: { name: 'Ada', agree: 'true' },
      signatures: [
        {
          id: 'me',
          file: DOCUMENT.file,
          role: 'owner',
          sso: 's',
          kind: 'TYPED',
          text: 'Ada L',
          recordTime: NOW.getTime() / 1000,
        },
      ],
    });
    if (verdict.kind !== 'run') throw new Error('expected a run');
    expect(verdict.submission.values.map((v) => v.fieldId)).toEqual(['name', 'agree']);
    expect(verdict.submission.signatures[0]!.evidence).toEqual({
      name: 'Ada L',
      email: 'a@x.test',
      ipAddress: '::1',
      userAgent: 'ua',
    });
  });

  it('keeps a field and a signature the pal named __proto__, in the run and in the draft', () => {
    const odd = basis();
    odd.documents = [
      {
        ...DOCUMENT,
        fields: [{ ...DOCUMENT.fields[0]!, id: '__proto__' }],
        signatures: [{ ...DOCUMENT.signatures[0]!, id: '__proto__', required: false }],
      },
    ];
    odd.states = [
      { file: DOCUMENT.file, values: Object.fromEntries([['__proto__', '']]), signatures: [] },
    ];
    const posted = Object.fromEntries([
      ['action', 'send'],
      ['__proto__', 'typed'],
      ['signature.__proto__', 'Ada L'],
    ]);
    const { verdict } = judge(posted, odd);
    if (verdict.kind !== 'run') throw new Error(`expected a run, not ${verdict.kind}`);
    expect(Object.entries(verdict.values)).toEqual([['__proto__', 'typed']]);
    expect(Object.entries(verdict.draft.values)).toEqual([['__proto__', 'typed']]);
    expect(Object.keys(verdict.draft.signatures)).toEqual(['__proto__']);
    expect(JSON.parse(JSON.stringify(verdict.draft)).values).toEqual(
      Object.fromEntries([['__proto__', 'typed']]),
    );
  });

  // A 400 page lost all the person typed, and the box's invisible character with it: they could
  // neither see what was wrong nor keep the rest.
  it('a value with characters XML cannot carry stops the form; the page gets it without them and the rest as typed', () => {
    const cases: [string, string, string][] = [
      ['x\u0001y', 'xy', 'a character that cannot be kept'],
      ['\u0000Ada\u0000', 'Ada', '2 characters that cannot be kept'],
      ['\u001b[31mred', '[31mred', 'a character that cannot be kept'],
      ['half \uD83D pair', 'half  pair', 'a character that cannot be kept'],
      ['\uFFFF\uDC00\u0008', '', '3 characters that cannot be kept'],
      ['\u0000'.repeat(FIELD_VALUE_MAX), '', '65,536 characters that cannot be kept'],
    ];
    for (const [posted, kept, said] of cases) {
      const { verdict } = judge({
        action: 'send',
        name: posted,
        agree: 'true',
        'signature.me': 'Ada L',
      });
      expect(verdict, JSON.stringify(posted.slice(0, 20))).toMatchObject({
        kind: 'incomplete',
        action: 'send',
        messages: [{ message: expect.stringMatching(/^name: /), type: 'FIELD_REFUSED' }],
        draft: { values: { name: kept, agree: 'true' }, signatures: { me: { text: 'Ada L' } } },
      });
      const { message } = (verdict as { messages: { message: string }[] }).messages[0]!;
      expect(message).toContain(said);
      expect(message).toContain('check it and send the form again');
    }
    // A tab and line breaks are text.
    expect(
      judge({ action: 'send', name: 'a\tb\nc', 'signature.me': 'Ada L' }).verdict,
    ).toMatchObject({ kind: 'run', values: { name: 'a\tb\nc' } });
  });

  it('a value past FIELD_VALUE_MAX or not UTF-8 stops the form, kept as near as it can be', () => {
    const long = judge({ action: 'send', name: 'y'.repeat(FIELD_VALUE_MAX + 5) }).verdict;
    expect(long).toMatchObject({
      kind: 'incomplete',
      messages: [
        { message: expect.stringContaining('name: it held more than 65,536 characters') },
        { type: 'SIGNATURE_REQUIRED' },
      ],
      draft: { values: { name: 'y'.repeat(FIELD_VALUE_MAX) } },
    });
    const notUtf8 = judgeForm(
      basis(),
      { action: 'send', name: 'Caf\uFFFD', 'signature.me': 'Ada L' },
      SIGNER,
      { signatureMaxBytes: 10 * 1024 },
      NOW,
      {},
      new Set(['name']),
    ).verdict;
    expect(notUtf8).toMatchObject({
      kind: 'incomplete',
      messages: [
        { message: expect.stringContaining('name: what was sent for it was not all text') },
      ],
      draft: { values: { name: 'Caf\uFFFD' } },
    });
  });

  // A browser's maxlength counts a line break as one character, and posts it as CRLF: a box
  // filled to its maxlength was refused as too long.
  it('keeps line breaks as the box has them (LF), counted as the browser counts them', () => {
    const line = 'x'.repeat(99);
    const posted = Array.from({ length: 655 }, () => line).join('\r\n');
    expect(posted.length).toBeGreaterThan(FIELD_VALUE_MAX);
    const { verdict } = judge({ action: 'send', name: posted, 'signature.me': 'Ada L' });
    expect(verdict).toMatchObject({ kind: 'run' });
    const value = (verdict as { values: Record<string, string> }).values.name!;
    expect(value).toBe(posted.replace(/\r\n/g, '\n'));
    expect(value.length).toBeLessThanOrEqual(FIELD_VALUE_MAX);
  });

  it('refuses an action not offered now before anything else', () => {
    expect(judge({ action: 'send' }, basis('DONE')).verdict).toMatchObject({
      kind: 'refused',
      status: 403,
    });
    expect(judge({ action: 'other', 'signature.me': 'data:nonsense' }).verdict).toMatchObject({
      kind: 'refused',
      status: 403,
    });
  });

  it('stops at a missing required signature, keeping the draft', () => {
    expect(judge({ action: 'send', name: 'Grace' }).verdict).toEqual({
      kind: 'incomplete',
      action: 'send',
      messages: [
        {
          message: 'Sign before you go on: your signature is required.',
          type: 'SIGNATURE_REQUIRED',
        },
      ],
      draft: { values: { name: 'Grace', agree: 'false' }, signatures: {} },
      draftFiles: [],
    });
  });

  it('stops an action at a signature it needs, and lets the others run without it', () => {
    const twoActions = basis();
    twoActions.manifest = parsePalManifest(
      {
        id: 'p',
        documents: [
          {
            file: DOCUMENT.file,
            signatures: [
              { id: 'me', role: 'owner', page: 1, x: 0, y: 0, customWidth: 10, customHeight: 10 },
            ],
          },
        ],
        actions: {
          transaction: [
            { name: 'approve', label: 'Approve and sign', signatures: ['me'] },
            { name: 'back', label: 'Return' },
          ],
        },
      },
      'pal.json',
    );
    twoActions.documents = [
      { ...DOCUMENT, signatures: [{ ...DOCUMENT.signatures[0]!, required: false }] },
    ];
    expect(judge({ action: 'approve' }, twoActions).verdict).toMatchObject({
      kind: 'incomplete',
      action: 'approve',
      messages: [
        {
          message: 'Sign before you go on: your signature is needed for “Approve and sign”.',
          type: 'SIGNATURE_REQUIRED',
        },
      ],
    });
    expect(judge({ action: 'back' }, twoActions).verdict).toMatchObject({ kind: 'run' });
    expect(judge({ action: 'approve', 'signature.me': 'Ada L' }, twoActions).verdict).toMatchObject(
      { kind: 'run', signatures: [{ id: 'me' }] },
    );
    // Given before (kept with the transaction): nothing more to sign.
    twoActions.states = [{ ...twoActions.states[0]!, signatures: [{ id: 'me' } as never] }];
    expect(judge({ action: 'approve' }, twoActions).verdict).toMatchObject({ kind: 'run' });
    // Another role's signature that the action names is not this person's to give.
    const manager = basis();
    manager.manifest = twoActions.manifest;
    manager.documents = twoActions.documents;
    manager.place = { ...manager.place, role: 'participant' };
    expect(judge({ action: 'approve' }, manager).verdict).toMatchObject({ kind: 'run' });
  });

  it('names the document of each missing signature when there are several', () => {
    const two = basis();
    const second = {
      ...DOCUMENT,
      file: 'documents/b.pdf',
      description: 'The terms',
      fields: [],
      signatures: [{ ...DOCUMENT.signatures[0]!, id: 'me-too' }],
    };
    two.documents = [DOCUMENT, second];
    two.states = [...two.states, { file: second.file, values: {}, signatures: [] }];
    expect(judge({ action: 'send' }, two).verdict).toMatchObject({
      kind: 'incomplete',
      messages: [
        {
          message: 'Sign before you go on: your signature in “a.pdf” is required.',
          type: 'SIGNATURE_REQUIRED',
        },
        {
          message: 'Sign before you go on: your signature in “The terms” is required.',
          type: 'SIGNATURE_REQUIRED',
        },
      ],
    });
  });

  it('takes a drawn PNG within the cap, and refuses one past it by its encoded size', () => {
    const small = `data:image/png;base64,${png(20, 10).toString('base64')}`;
    expect(judge({ action: 'send', 'signature.me': small }).verdict).toMatchObject({
      kind: 'run',
      signatures: [{ kind: 'DRAWN', image: png(20, 10).toString('base64') }],
    });
    const big = `data:image/png;base64,${'A'.repeat(20 * 1024)}`;
    expect(judge({ action: 'send', 'signature.me': big }).verdict).toMatchObject({
      kind: 'incomplete',
      messages: [
        {
          message:
            'The signature on page 1 of “a.pdf” is larger than 10 KiB (SIGNATURE_MAX_KB): sign again.',
          type: 'SIGNATURE_REFUSED',
        },
      ],
      draft: { signatures: {} },
    });
    const anonymous = { ...SIGNER, sso: null, name: null };
    const asAnonymous = (posted: Record<string, string>) =>
      judgeForm(basis(), posted, anonymous, { signatureMaxBytes: 10 * 1024 }, NOW).verdict;
    expect(asAnonymous({ action: 'send', 'signature.me': 'x'.repeat(202) })).toMatchObject({
      kind: 'incomplete',
      messages: [
        {
          message: 'The signature on page 1 of “a.pdf” is longer than 201 characters: sign again.',
        },
      ],
    });
    // A typed name with control characters comes back without them, for the person to check.
    expect(
      asAnonymous({ action: 'send', 'signature.me': 'Grace\u0000 Hopper\u001b' }),
    ).toMatchObject({
      kind: 'incomplete',
      messages: [{ message: expect.stringContaining('they were taken out: sign again') }],
      draft: { signatures: { me: { kind: 'TYPED', text: 'Grace Hopper' } } },
    });
    expect(asAnonymous({ action: 'send', 'signature.me': 'Anyone At All' })).toMatchObject({
      kind: 'run',
    });
    // A known person signs with their own name only.
    expect(judge({ action: 'send', 'signature.me': 'Grace Hopper' }).verdict).toMatchObject({
      kind: 'incomplete',
      messages: [
        {
          message:
            'The signature on page 1 of “a.pdf” is signed with your own name, Ada L, or drawn: sign again.',
        },
      ],
    });
    // The longest name an SSO may have (100 + space + 100), in characters beyond the BMP too.
    const longest = `${'𝔄'.repeat(100)} ${'𝔅'.repeat(100)}`;
    expect(
      judgeForm(
        basis(),
        { action: 'send', 'signature.me': longest },
        { ...SIGNER, name: longest },
        { signatureMaxBytes: 10 * 1024 },
        NOW,
      ).verdict,
    ).toMatchObject({ kind: 'run' });
  });
});
