import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blankPdf,
  claimFormPdf,
  encryptedPdf,
  jpeg,
  pdfWithField,
  png,
} from '../../test/documents.js';
import { engine } from '../../test/engine.js';
import { deployManifest, tempDir, testContext, type TestContext } from '../../test/helpers.js';
import { createEnterprise } from './enterprises.js';
import { NotFoundError } from './errors.js';
import {
  ManifestError,
  buildPalPackage,
  loadPalPackage,
  type PackageOptions,
} from './pal-manifest.js';
import { fieldLabel } from './field-labels.js';
import {
  getPalDocumentFile,
  getPalDocuments,
  toWireDocument,
  type PalDocument,
} from './pal-documents.js';
import { getPalVersion } from './pals.js';

const FILE = 'pals/claims/pal.json';
const CLAIM = 'documents/claim.pdf';
/** Bytes this process has read through read(2) and the like so far (Linux's /proc/self/io). */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('base64');

/** The lines of the error that refuses the package. */
async function problems(
  json: unknown,
  files: Record<string, string | Uint8Array> = {},
  options: PackageOptions = {},
): Promise<string[]> {
  try {
    await buildPalPackage(json, files, FILE, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    return (error as Error).message.split('\n');
  }
  throw new Error('expected the package to be refused');
}

const box = { x: 10, y: 10, width: 100, height: 20 };
const signatureBox = { x: 10, y: 10, customWidth: 150, customHeight: 50 };

// Parsing and checking need no database: on the SQLite project only.
describe.runIf(engine === 'sqlite')('pal documents in the manifest', () => {
  let claimForm: Uint8Array;
  beforeAll(async () => {
    claimForm = await claimFormPdf();
  });

  it('reads a PDF: the manifest fields, then the PDF form fields it does not name, its signatures and bookmarks', async () => {
    const pkg = await buildPalPackage(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            description: 'The claim form',
            fields: [
              {
                id: 'amount',
                // What a person reads: a bidirectional override and a line break are not kept.
                label: 'Amount\u202e\n(CHF)',
                roles: 'participant|owner',
                page: 1,
                x: 400,
                y: 200,
                width: 120,
                height: 20,
              },
              // Names the PDF's radio group `kind`, which is then not read from the PDF.
              {
                id: 'kind',
                type: 'RADIO',
                picklist: 'Travel|Meals',
                value: 'Travel',
                page: 3,
                x: 500,
                y: 40,
                width: 40,
                height: 90,
              },
            ],
            signatures: [
              {
                id: 'employee',
                role: 'participant',
                required: true,
                page: 2,
                x: 50,
                y: 700,
                customWidth: 200,
                customHeight: 60,
              },
            ],
            bookmarks: [{ line: 2, text: 'Notes', type: 'BOOKMARK' }],
          },
        ],
      },
      { [CLAIM]: claimForm },
      FILE,
    );
    expect(pkg.documents).toHaveLength(1);
    const [{ document, content }] = pkg.documents;
    expect(content).toEqual(claimForm);
    expect(document).toEqual({
      file: CLAIM,
      contentType: 'application/pdf',
      digest: sha256(claimForm),
      size: claimForm.byteLength,
      pages: [
        { width: 612, height: 792 },
        { width: 595.28, height: 841.89 },
        { width: 792, height: 612 },
      ],
      description: 'The claim form',
      fields: [
        {
          id: 'amount',
          roles: 'participant|owner',
          type: 'TEXT',
          page: 1,
          x: 400,
          y: 200,
          width: 120,
          height: 20,
          palDefined: true,
        },
        {
          id: 'kind',
          type: 'RADIO',
          picklist: 'Travel|Meals',
          value: 'Travel',
          page: 3,
          x: 500,
          y: 40,
          width: 40,
          height: 90,
          palDefined: true,
        },
        {
          id: 'applicant.name',
          type: 'TEXT',
          value: 'Ada Lovelace',
          page: 1,
          x: 50,
          y: 72,
          width: 200,
          height: 20,
          palDefined: false,
        },
        {
          id: 'country',
          type: 'SELECT',
          picklist: 'CH|DE|FR',
          value: 'DE',
          page: 1,
          x: 300,
          y: 72,
          width: 100,
          height: 20,
          palDefined: false,
        },
        {
          id: 'notes',
          type: 'TEXTAREA',
          page: 2,
          x: 50,
          y: 642,
          width: 300,
          height: 100,
          palDefined: false,
        },
        {
          id: 'agree',
          type: 'CHECKBOXCHECKED',
          page: 2,
          x: 50,
          y: 527,
          width: 15,
          height: 15,
          palDefined: false,
        },
        {
          id: 'newsletter',
          type: 'CHECKBOX',
          page: 2,
          x: 100,
          y: 527,
          width: 15,
          height: 15,
          palDefined: false,
        },
      ],
      signatures: [
        {
          id: 'employee',
          role: 'participant',
          required: true,
          recordTime: 0,
          page: 2,
          x: 50,
          y: 700,
          customWidth: 200,
          customHeight: 60,
        },
      ],
      // The manifest's label, else the PDF field's alternate name (the radio group has none).
      labels: {
        amount: 'Amount (CHF)',
        'applicant.name': 'Full name',
        notes: 'Notes for the reviewer – optional',
      },
      bookmarks: [{ line: 2, text: 'Notes', type: 'BOOKMARK', mnemonic: 0 }],
    });
    // The spec's Document, as a workflow or a client will see it: no label there.
    expect(toWireDocument(document)).toEqual({
      contentType: 'application/pdf',
      filename: CLAIM,
      digest: sha256(claimForm),
      description: 'The claim form',
      bookmarks: document.bookmarks,
      fields: document.fields,
      signatures: document.signatures,
    });
    expect(toWireDocument(document, content).content).toBe(
      Buffer.from(claimForm).toString('base64'),
    );
  });

  it('takes PNG and JPEG images as one page measured in pixels, as a browser shows them', async () => {
    const pkg = await buildPalPackage(
      {
        id: 'ids',
        documents: [
          {
            file: 'scans/passport.png',
            fields: [{ id: 'number', page: 1, x: 0, y: 0, width: 300, height: 200 }],
          },
          // 640 × 480 stored, EXIF orientation 6: shown 480 wide and 640 high.
          {
            file: 'scans/licence.JPG',
            signatures: [
              {
                id: 'holder',
                role: 'owner',
                page: 1,
                x: 0,
                y: 580,
                customWidth: 480,
                customHeight: 60,
              },
            ],
          },
        ],
      },
      { 'scans/passport.png': png(300, 200), 'scans/licence.JPG': jpeg(640, 480, 6) },
    );
    expect(pkg.documents.map((d) => [d.document.contentType, d.document.pages])).toEqual([
      ['image/png', [{ width: 300, height: 200 }]],
      ['image/jpeg', [{ width: 480, height: 640 }]],
    ]);
    expect(
      await problems(
        {
          id: 'ids',
          documents: [
            { file: 'a.png', fields: [{ id: 'n', page: 1, x: 250, y: 0, width: 100, height: 10 }] },
          ],
        },
        { 'a.png': png(300, 200) },
      ),
    ).toEqual([
      `${FILE}: documents[0].fields[0]: field "n" reaches past the right edge of its page (x 250 + width 100 = 350; page 1 is 300 × 200 pixels)`,
    ]);
  });

  it('refuses every field and signature outside its page, each on a line of its own', async () => {
    const lines = await problems(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            fields: [
              { id: 'wide', page: 1, x: 500, y: 10, width: 200, height: 20 },
              { id: 'low', page: 2, x: 10, y: 800, width: 100, height: 50 },
              { id: 'nowhere', page: 4, ...box },
              // A4 is 595.28 points wide: a box may reach 596, the width rounded up.
              { id: 'edge', page: 2, x: 0, y: 0, width: 596, height: 842 },
            ],
            signatures: [
              // Page 3 is shown turned: 792 wide and 612 high.
              {
                id: 'turned',
                role: 'owner',
                page: 3,
                x: 600,
                y: 600,
                customWidth: 150,
                customHeight: 50,
              },
              { id: 'gone', role: 'owner', page: 9, ...signatureBox },
            ],
          },
        ],
      },
      { [CLAIM]: claimForm },
    );
    expect(lines).toEqual([
      `${FILE}: documents[0].fields[0]: field "wide" reaches past the right edge of its page (x 500 + width 200 = 700; page 1 is 612 × 792 points)`,
      `${FILE}: documents[0].fields[1]: field "low" reaches past the bottom edge of its page (y 800 + height 50 = 850; page 2 is 595.28 × 841.89 points)`,
      `${FILE}: documents[0].fields[2].page: field "nowhere" is on page 4, but "${CLAIM}" has 3 pages`,
      `${FILE}: documents[0].signatures[0]: signature "turned" reaches past the bottom edge of its page (y 600 + height 50 = 650; page 3 is 792 × 612 points)`,
      `${FILE}: documents[0].signatures[1].page: signature "gone" is on page 9, but "${CLAIM}" has 3 pages`,
    ]);
  });

  it('refuses picklists, types and values that do not go together, and what the service fills in', async () => {
    const field = (extra: object) => ({ page: 1, ...box, ...extra });
    const lines = await problems({
      id: 'claims',
      documents: [
        {
          file: CLAIM,
          fields: [
            field({ id: 'a', type: 'TEXT', picklist: 'Yes|No' }),
            field({ id: 'b', type: 'RADIO' }),
            field({ id: 'c', type: 'SELECT', picklist: 'Travel|Meals', value: 'Hotel' }),
            field({ id: 'd', type: 'CHECKBOX', value: 'yes' }),
            field({ id: 'e', type: 'SELECT', picklist: 'Travel||Meals' }),
            field({ id: 'f', palDefined: false }),
            field({ id: 'action' }),
            field({ id: 'signature.x' }),
            field({ id: 'g', type: 'BUTTON' }),
            field({ id: 'h', roles: 'owner|' }),
            { id: 'i', x: 10, y: 10, width: 100, height: 20 },
            field({ id: 'j', x: -5, width: 0 }),
          ],
          signatures: [
            { id: 's1', role: 'owner|participant', page: 1, ...signatureBox },
            { id: 's2', role: 'owner', recordTime: 1700000000, page: 1, ...signatureBox },
            { role: 'owner', page: 1, ...signatureBox },
          ],
        },
      ],
    });
    expect(lines).toEqual([
      `${FILE}: documents[0].fields[0].picklist: is only for RADIO and SELECT fields, not TEXT`,
      `${FILE}: documents[0].fields[1].picklist: is required for a RADIO field (its choices, separated by "|")`,
      `${FILE}: documents[0].fields[2].value: "Hotel" is not one of the picklist's choices`,
      `${FILE}: documents[0].fields[3].value: a CHECKBOX field's value is "true" or "false"`,
      `${FILE}: documents[0].fields[4].picklist: has an empty choice (between "|")`,
      `${FILE}: documents[0].fields[5].palDefined: must be true or left out (false marks a PDF's own form fields, read at deploy)`,
      `${FILE}: documents[0].fields[6].id: "action" is a name the page's form uses itself (action, csrf, signature.…)`,
      `${FILE}: documents[0].fields[7].id: "signature.x" is a name the page's form uses itself (action, csrf, signature.…)`,
      `${FILE}: documents[0].fields[8].type: expected one of "TEXT"|"TEXTAREA"|"CHECKBOX"|"RADIO"|"SELECT"|"CHECKBOXCHECKED"`,
      `${FILE}: documents[0].fields[9].roles: has an empty role (between "|")`,
      `${FILE}: documents[0].fields[10].page: is required (expected number)`,
      `${FILE}: documents[0].fields[11].x: must not be negative (positions count from the top-left corner)`,
      `${FILE}: documents[0].fields[11].width: must be at least 1`,
      `${FILE}: documents[0].signatures[0].role: expected one role name (no "|", no spaces around it)`,
      `${FILE}: documents[0].signatures[1].recordTime: is set when the person signs: leave it out (or 0)`,
      `${FILE}: documents[0].signatures[2].id: is required (expected string)`,
    ]);
  });

  it('refuses a file listed twice, and a field or signature id used twice in the pal', async () => {
    const lines = await problems({
      id: 'claims',
      documents: [
        {
          file: CLAIM,
          fields: [{ id: 'amount', page: 1, ...box }],
          signatures: [{ id: 'employee', role: 'owner', page: 1, ...signatureBox }],
        },
        {
          file: 'documents/receipt.png',
          fields: [{ id: 'amount', page: 1, ...box }],
          signatures: [{ id: 'employee', role: 'owner', page: 1, ...signatureBox }],
        },
        { file: CLAIM },
      ],
    });
    expect(lines).toEqual([
      `${FILE}: documents[1].fields[0].id: "amount" is already the id of documents[0].fields[0]`,
      `${FILE}: documents[1].signatures[0].id: "employee" is already the id of documents[0].signatures[0]`,
      `${FILE}: documents[2].file: "${CLAIM}" is already documents[0]`,
    ]);
  });

  it('refuses a file that is missing, too large, not a PDF, encrypted, or not the image its name says', async () => {
    const files = {
      'big.pdf': new Uint8Array(1024 * 1024 + 1),
      'corrupt.pdf': new TextEncoder().encode('%PDF-1.7\nthis is no PDF at all'),
      'secret.pdf': encryptedPdf('encrypted-aes256'),
      'restricted.pdf': encryptedPdf('encrypted-restricted'),
      'photo.png': jpeg(20, 20),
      'scan.jpg': 'a text file',
      'folder/../../escape.pdf': claimForm,
    };
    const lines = await problems(
      {
        id: 'claims',
        documents: [
          'missing.pdf',
          'big.pdf',
          'corrupt.pdf',
          'secret.pdf',
          'restricted.pdf',
          'photo.png',
          'scan.jpg',
        ].map((file) => ({ file })),
      },
      files,
      { documentMaxBytes: 1024 * 1024 },
    );
    expect(lines).toEqual([
      `${FILE}: documents[0].file: file "missing.pdf" not found in the pal folder`,
      `${FILE}: documents[1].file: file "big.pdf" is 1.1 MiB; at most 1 MiB (DOCUMENT_MAX_MB)`,
      expect.stringMatching(
        /^pals\/claims\/pal\.json: documents\[2\]\.file: file "corrupt\.pdf" is not a readable PDF \(.+\)$/,
      ),
      `${FILE}: documents[3].file: file "secret.pdf" is encrypted (password-protected or restricted): deploy a copy saved without encryption`,
      `${FILE}: documents[4].file: file "restricted.pdf" is encrypted (password-protected or restricted): deploy a copy saved without encryption`,
      `${FILE}: documents[5].file: file "photo.png" is not a PNG image`,
      `${FILE}: documents[6].file: file "scan.jpg" is not a JPEG image`,
    ]);
    expect(
      await problems({
        id: 'claims',
        documents: [{ file: '../escape.pdf' }, { file: 'notes.txt' }],
      }),
    ).toEqual([
      `${FILE}: documents[0].file: must be a path inside the pal folder`,
      `${FILE}: documents[1].file: expected a .pdf, .png, .jpg or .jpeg file`,
    ]);
  });

  it("checks a manifest field that names one of the PDF's own fields against it", async () => {
    const lines = await problems(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            fields: [
              { id: 'agree', type: 'TEXT', page: 2, ...box },
              { id: 'country', type: 'SELECT', picklist: 'CH|IT', page: 1, ...box },
              { id: 'notes', type: 'TEXT', page: 2, ...box },
            ],
          },
        ],
      },
      { [CLAIM]: claimForm },
    );
    expect(lines).toEqual([
      `${FILE}: documents[0].fields[0].type: the PDF's form field "agree" is CHECKBOXCHECKED, which a TEXT field cannot fill (use CHECKBOX or CHECKBOXCHECKED)`,
      `${FILE}: documents[0].fields[1].picklist: "IT" is not a choice of the PDF's form field "country" (CH|DE|FR)`,
    ]);
  });

  it("labels a manifest field that names one of the PDF's own fields by its own label, else the PDF's", async () => {
    const pkg = await buildPalPackage(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            fields: [
              { id: 'applicant.name', page: 1, ...box },
              {
                id: 'notes',
                type: 'TEXTAREA',
                label: 'What the reviewer should know',
                page: 2,
                ...box,
              },
              { id: '__proto__', label: 'Not a prototype', page: 1, ...box },
            ],
          },
        ],
      },
      { [CLAIM]: claimForm },
      FILE,
    );
    const labels = pkg.documents[0]!.document.labels!;
    expect(Object.entries(labels)).toEqual([
      ['applicant.name', 'Full name'],
      ['notes', 'What the reviewer should know'],
      ['__proto__', 'Not a prototype'],
    ]);
    expect(pkg.documents[0]!.document.fields.some((f) => 'label' in f)).toBe(false);
    // As the version keeps it, and reads it back.
    const stored = JSON.parse(JSON.stringify(pkg.documents[0]!.document)) as PalDocument;
    expect(fieldLabel(stored.labels, '__proto__')).toBe('Not a prototype');
    expect(fieldLabel(stored.labels, 'agree')).toBe('Agree');
    expect(fieldLabel(stored.labels, 'toString')).toBe('To string');

    const lines = await problems(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            fields: [
              { id: 'a', label: 'x'.repeat(201), page: 1, ...box },
              { id: 'b', label: ' ', page: 1, ...box },
              // Would hide the PDF's own name behind nothing.
              { id: 'notes', type: 'TEXTAREA', label: '\u202e', page: 2, ...box },
              { id: 'c', label: '👍🏽'.repeat(200), page: 1, ...box },
            ],
          },
        ],
      },
      { [CLAIM]: claimForm },
    );
    expect(lines).toEqual([
      `${FILE}: documents[0].fields[0].label: must be at most 200 characters`,
      `${FILE}: documents[0].fields[1].label: must hold readable text`,
      `${FILE}: documents[0].fields[2].label: must hold readable text`,
    ]);
  });

  it("keeps a field's `input` with the document's pages, never in the Field, and refuses one that does not fit its type", async () => {
    const pkg = await buildPalPackage(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            fields: [
              { id: 'applicant.name', input: 'name', page: 1, ...box },
              { id: 'notes', type: 'TEXTAREA', input: 'address', page: 2, ...box },
              { id: '__proto__', input: 'decimal', page: 1, ...box },
            ],
          },
        ],
      },
      { [CLAIM]: claimForm },
      FILE,
    );
    const { inputs, fields } = pkg.documents[0]!.document;
    expect(Object.entries(inputs!)).toEqual([
      ['applicant.name', 'name'],
      ['notes', 'address'],
      ['__proto__', 'decimal'],
    ]);
    expect(fields.some((f) => 'input' in f)).toBe(false);

    const lines = await problems(
      {
        id: 'claims',
        documents: [
          {
            file: CLAIM,
            fields: [
              { id: 'a', input: 'money', page: 1, ...box },
              { id: 'b', type: 'SELECT', picklist: 'x|y', input: 'email', page: 1, ...box },
              { id: 'notes', type: 'TEXTAREA', input: 'email', page: 2, ...box },
            ],
          },
        ],
      },
      { [CLAIM]: claimForm },
    );
    expect(lines).toEqual([
      `${FILE}: documents[0].fields[0].input: expected one of name, email, tel, url, organization, address, postal-code, date, decimal, integer`,
      `${FILE}: documents[0].fields[1].input: is only for TEXT and TEXTAREA fields, not SELECT`,
      `${FILE}: documents[0].fields[2].input: a TEXTAREA field may be only address; "email" is for TEXT fields`,
    ]);
  });

  it('refuses a PDF form field it cannot take as it is, and takes it once the manifest names it', async () => {
    const stray = await pdfWithField('stray', { x: 590, y: 700, width: 50, height: 20 });
    const piped = await pdfWithField('pick', { x: 10, y: 700, width: 50, height: 20 }, [
      'a|b',
      'c',
    ]);
    const reserved = await pdfWithField('csrf', { x: 10, y: 700, width: 50, height: 20 });
    expect(
      await problems(
        {
          id: 'x',
          documents: [{ file: 'stray.pdf' }, { file: 'piped.pdf' }, { file: 'reserved.pdf' }],
        },
        { 'stray.pdf': stray, 'piped.pdf': piped, 'reserved.pdf': reserved },
      ),
    ).toEqual([
      `${FILE}: documents[0].file: the PDF's form field "stray" reaches past the right edge of its page (x 590 + width 50 = 640; page 1 is 612 × 792 points): name it in the manifest's fields to place it`,
      `${FILE}: documents[1].file: the PDF's form field "pick" has a choice with "|" in it, which a picklist cannot hold: name it in the manifest's fields`,
      `${FILE}: documents[2].file: the PDF's form field "csrf" cannot be a field: its name "csrf" is a name the page's form uses itself (action, csrf, signature.…)`,
    ]);
    const placed = await buildPalPackage(
      {
        id: 'x',
        documents: [
          {
            file: 'stray.pdf',
            fields: [{ id: 'stray', page: 1, x: 550, y: 72, width: 50, height: 20 }],
          },
        ],
      },
      { 'stray.pdf': stray },
    );
    expect(placed.documents[0].document.fields).toEqual([
      {
        id: 'stray',
        type: 'TEXT',
        page: 1,
        x: 550,
        y: 72,
        width: 50,
        height: 20,
        palDefined: true,
      },
    ]);
  });

  it('refuses a PDF form field whose id a field of another document has', async () => {
    expect(
      await problems(
        {
          id: 'claims',
          documents: [
            { file: 'cover.pdf', fields: [{ id: 'country', page: 1, ...box }] },
            { file: CLAIM },
          ],
        },
        { 'cover.pdf': await blankPdf([612, 792]), [CLAIM]: claimForm },
      ),
    ).toEqual([
      `${FILE}: documents[1].file: the PDF's form field "country" has the id of a field of documents[0] ("cover.pdf"); field ids are unique across a pal`,
    ]);
  });

  it('hashes the documents into the package: other bytes, another package', async () => {
    const manifest = { id: 'claims', documents: [{ file: CLAIM }] };
    const first = await buildPalPackage(manifest, { [CLAIM]: await blankPdf([612, 792]) });
    const same = await buildPalPackage(manifest, { [CLAIM]: await blankPdf([612, 792]) });
    const other = await buildPalPackage(manifest, { [CLAIM]: await blankPdf([595, 842]) });
    expect(same.contentHash).toBe(first.contentHash);
    expect(other.contentHash).not.toBe(first.contentHash);
  });

  describe('loadPalPackage', () => {
    const dir = tempDir('pal-documents-');
    afterAll(() => dir.remove());

    it('reads the documents the manifest names from the folder', async () => {
      const folder = join(dir.path, 'claims');
      mkdirSync(join(folder, 'documents'), { recursive: true });
      writeFileSync(
        join(folder, 'pal.json'),
        JSON.stringify({
          id: 'claims',
          documents: [{ file: CLAIM }, { file: 'documents/gone.pdf' }],
        }),
      );
      writeFileSync(join(folder, CLAIM), claimForm);
      await expect(loadPalPackage(folder)).rejects.toThrow(
        `${join(folder, 'pal.json')}: documents[1].file: file "documents/gone.pdf" not found in the pal folder`,
      );
      writeFileSync(
        join(folder, 'pal.json'),
        JSON.stringify({ id: 'claims', documents: [{ file: CLAIM }] }),
      );
      const pkg = await loadPalPackage(folder);
      expect(pkg.documents[0].document.digest).toBe(sha256(claimForm));
      expect(pkg.documents[0].content).toEqual(Buffer.from(claimForm));
    });

    it('refuses a 200 MB PDF by its size, without reading it', async () => {
      const folder = join(dir.path, 'huge');
      mkdirSync(folder);
      writeFileSync(
        join(folder, 'pal.json'),
        JSON.stringify({ id: 'huge', documents: [{ file: 'huge.pdf' }] }),
      );
      writeFileSync(join(folder, 'huge.pdf'), '%PDF-1.7\n');
      truncateSync(join(folder, 'huge.pdf'), 200 * 1024 * 1024); // sparse: no disk, and no memory unless read
      const before = bytesRead();
      await expect(loadPalPackage(folder)).rejects.toThrow(
        `${join(folder, 'pal.json')}: documents[0].file: file "huge.pdf" is 200 MiB; at most 25 MiB (DOCUMENT_MAX_MB)`,
      );
      // The process (every thread of it) read far less than the file.
      expect(bytesRead() - before).toBeLessThan(1024 * 1024);
    });
  });
});

describe('pal documents stored with the pal version', () => {
  let t: TestContext;
  let acme: string;
  let globex: string;
  let claimForm: Uint8Array;
  beforeAll(async () => {
    t = await testContext();
    acme = (await createEnterprise(t.ctx, 'Acme')).id;
    globex = (await createEnterprise(t.ctx, 'Globex')).id;
    claimForm = await claimFormPdf();
  });
  afterAll(() => t.close());

  const manifest = (description: string) => ({
    id: 'claims',
    documents: [
      {
        file: CLAIM,
        description,
        signatures: [
          {
            id: 'employee',
            role: 'participant',
            page: 2,
            x: 50,
            y: 700,
            customWidth: 200,
            customHeight: 60,
          },
        ],
      },
      { file: 'documents/receipt.png' },
    ],
  });
  const contentRows = (enterpriseId: string) =>
    t.ctx.db
      .selectFrom('document_contents')
      .select(['digest', 'size'])
      .where('enterprise_id', '=', enterpriseId)
      .orderBy('size')
      .execute();

  it('keeps each version with its documents and their bytes, the bytes once per enterprise', async () => {
    const receipt = png(40, 30);
    await deployManifest(t.ctx, acme, manifest('First'), {
      [CLAIM]: claimForm,
      'documents/receipt.png': receipt,
    });
    // Version 2: the claim form unchanged, another receipt.
    const receipt2 = png(60, 30);
    await deployManifest(t.ctx, acme, manifest('Second'), {
      [CLAIM]: claimForm,
      'documents/receipt.png': receipt2,
    });

    const v1 = await getPalDocuments(t.ctx, acme, 'claims', 1);
    const v2 = await getPalDocuments(t.ctx, acme, 'claims', 2);
    expect(v1.map((d) => [d.file, d.description, d.digest])).toEqual([
      [CLAIM, 'First', sha256(claimForm)],
      ['documents/receipt.png', undefined, sha256(receipt)],
    ]);
    expect(v2.map((d) => [d.file, d.description, d.digest])).toEqual([
      [CLAIM, 'Second', sha256(claimForm)],
      ['documents/receipt.png', undefined, sha256(receipt2)],
    ]);
    // What was read at deploy is what is stored: the PDF's own fields, the signature, the pages.
    expect(v2[0].fields.filter((f) => !f.palDefined).map((f) => f.id)).toEqual([
      'applicant.name',
      'country',
      'notes',
      'agree',
      'newsletter',
      'kind',
    ]);
    expect(v2[0].signatures).toEqual([
      {
        id: 'employee',
        role: 'participant',
        required: false,
        recordTime: 0,
        page: 2,
        x: 50,
        y: 700,
        customWidth: 200,
        customHeight: 60,
      },
    ]);
    expect(v2[1].pages).toEqual([{ width: 60, height: 30 }]);
    expect(
      (await getPalVersion(t.ctx, acme, 'claims', 2)).manifest.documents?.[0].description,
    ).toBe('Second');

    // The bytes come back as deployed, from either version.
    const file = await getPalDocumentFile(t.ctx, acme, 'claims', 1, 'documents/receipt.png');
    expect(Buffer.from(file.content)).toEqual(receipt);
    expect(sha256(file.content)).toBe(file.document.digest);
    expect(
      Buffer.from((await getPalDocumentFile(t.ctx, acme, 'claims', 2, CLAIM)).content),
    ).toEqual(Buffer.from(claimForm));
    // Three distinct files for two versions of two documents.
    expect(await contentRows(acme)).toEqual([
      { digest: sha256(receipt), size: receipt.byteLength },
      { digest: sha256(receipt2), size: receipt2.byteLength },
      { digest: sha256(claimForm), size: claimForm.byteLength },
    ]);
  });

  it("never shares an enterprise's documents with another", async () => {
    await deployManifest(
      t.ctx,
      globex,
      { id: 'claims', documents: [{ file: CLAIM }] },
      { [CLAIM]: claimForm },
    );
    expect(await contentRows(globex)).toEqual([
      { digest: sha256(claimForm), size: claimForm.byteLength },
    ]);
    expect(await getPalDocuments(t.ctx, globex, 'claims', 1)).toHaveLength(1);
    await expect(
      getPalDocumentFile(t.ctx, globex, 'claims', 1, 'documents/receipt.png'),
    ).rejects.toThrow(NotFoundError);
    await expect(getPalDocumentFile(t.ctx, acme, 'claims', 3, CLAIM)).rejects.toThrow(
      NotFoundError,
    );
  });

  it('stores nothing of a package that is refused', async () => {
    await expect(
      deployManifest(
        t.ctx,
        acme,
        { id: 'claims', documents: [{ file: CLAIM, fields: [{ id: 'x', page: 5, ...box }] }] },
        { [CLAIM]: claimForm },
      ),
    ).rejects.toThrow(ManifestError);
    expect(await getPalDocuments(t.ctx, acme, 'claims', 3)).toEqual([]);
    expect(await contentRows(acme)).toHaveLength(3);
  });
});
