/**
 * Proof by round trip: for each class of XSD change, a fixture pair of schemas, the bump the diff
 * gives it, and the wire behind that bump. Documents generated from one version (fast-check) are
 * validated against the other by libxml2:
 * - old → new: what clients built on the old packages send (requests), or what old servers
 *   stored, must still validate after a minor change; after a major one some fail.
 * - new → old: what a new server answers, read by a client still on the old packages; used where
 *   a change only breaks readers of responses.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultContext } from '@pal-workflow/codegen';
import type { ChangeBump } from '../src/change.js';
import { diffContracts } from '../src/diff.js';
import { loadContract } from '../src/load.js';
import { makePair, type Edit } from './pairs.js';
import { DocumentArbitraries, VersionValidator } from './xml-documents.js';

const PAL = 'schemas/xsd/pal.xsd';
const SERVICES = 'schemas/xsd/services.xsd';

interface Case {
  name: string;
  edits: Edit[];
  bump: ChangeBump;
  kind: string;
  /** The root whose documents carry the change, and which way they travel. */
  root: string;
  direction: 'old-to-new' | 'new-to-old';
}

const CASES: Case[] = [
  {
    name: 'a new optional member in a request type',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="payload" type="xs:base64Binary" minOccurs="0"/>\n    </xs:sequence>\n  </xs:complexType>\n\n  <xs:complexType name="TransactionContent">',
        to: '<xs:element name="payload" type="xs:base64Binary" minOccurs="0"/>\n      <xs:element name="locale" type="xs:string" minOccurs="0"/>\n    </xs:sequence>\n  </xs:complexType>\n\n  <xs:complexType name="TransactionContent">',
      },
    ],
    bump: 'minor',
    kind: 'member-added-optional',
    root: 'consoleContent',
    direction: 'old-to-new',
  },
  {
    name: 'a new optional member in a response type',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="shell" type="xs:boolean"/>',
        to: '<xs:element name="shell" type="xs:boolean"/>\n      <xs:element name="weight" type="xs:int" minOccurs="0"/>',
      },
    ],
    bump: 'minor',
    kind: 'member-added-optional',
    root: 'palInfo',
    direction: 'old-to-new',
  },
  {
    name: 'a new required member',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="shell" type="xs:boolean"/>',
        to: '<xs:element name="shell" type="xs:boolean"/>\n      <xs:element name="weight" type="xs:int"/>',
      },
    ],
    bump: 'major',
    kind: 'member-added-required',
    root: 'palInfo',
    direction: 'old-to-new',
  },
  {
    name: 'a member removed',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="test" type="xs:boolean"/>\n    </xs:sequence>\n  </xs:complexType>\n\n  <xs:complexType name="TransactionSearch">',
        to: '</xs:sequence>\n  </xs:complexType>\n\n  <xs:complexType name="TransactionSearch">',
      },
    ],
    bump: 'major',
    kind: 'member-removed',
    root: 'transactionInfo',
    direction: 'old-to-new',
  },
  {
    name: 'an optional member made required',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="name" type="xs:string" minOccurs="0"/>\n      <xs:element name="value" type="xs:string" minOccurs="0"/>',
        to: '<xs:element name="name" type="xs:string"/>\n      <xs:element name="value" type="xs:string" minOccurs="0"/>',
      },
    ],
    bump: 'major',
    kind: 'member-now-required',
    root: 'nameValue',
    direction: 'old-to-new',
  },
  {
    name: 'a required member made optional in a request-only type',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="startRecord" type="xs:int"/>\n      <xs:element name="includeTest" type="xs:boolean"/>\n    </xs:sequence>',
        to: '<xs:element name="startRecord" type="xs:int" minOccurs="0"/>\n      <xs:element name="includeTest" type="xs:boolean"/>\n    </xs:sequence>',
      },
    ],
    bump: 'minor',
    kind: 'member-now-optional-request',
    root: 'transactionSearch',
    direction: 'old-to-new',
  },
  {
    name: 'a required member made optional in a response type',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="deployed" type="xs:boolean"/>',
        to: '<xs:element name="deployed" type="xs:boolean" minOccurs="0"/>',
      },
    ],
    bump: 'major',
    kind: 'member-now-optional',
    root: 'palInfo',
    direction: 'new-to-old',
  },
  {
    name: "a member's type changed",
    edits: [
      {
        file: PAL,
        from: '<xs:element name="recordsProcessed" type="xs:int"/>',
        to: '<xs:element name="recordsProcessed" type="xs:boolean"/>',
      },
    ],
    bump: 'major',
    kind: 'member-type-changed',
    root: 'transactionResult',
    direction: 'old-to-new',
  },
  {
    name: 'a member became a list',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="name" type="xs:string" minOccurs="0"/>\n      <xs:element name="value" type="xs:string" minOccurs="0"/>',
        to: '<xs:element name="name" type="xs:string" minOccurs="0"/>\n      <xs:element name="value" type="xs:string" minOccurs="0" maxOccurs="unbounded"/>',
      },
    ],
    bump: 'major',
    kind: 'member-list-changed',
    root: 'nameValue',
    direction: 'new-to-old',
  },
  {
    name: 'a member no longer nillable',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="type" type="xs:string" minOccurs="0" nillable="true"/>',
        to: '<xs:element name="type" type="xs:string" minOccurs="0"/>',
      },
    ],
    bump: 'major',
    kind: 'member-nillable-changed',
    root: 'errorResult',
    direction: 'old-to-new',
  },
  {
    name: 'a lower maxLength on request filters',
    edits: [
      {
        file: PAL,
        from: '<xs:maxLength value="1000"/>',
        to: '<xs:maxLength value="3"/>',
      },
    ],
    bump: 'major',
    kind: 'max-length-lowered',
    root: 'palSearch',
    direction: 'old-to-new',
  },
  {
    name: 'members reordered',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="name" type="xs:string" minOccurs="0"/>\n      <xs:element name="value" type="xs:string" minOccurs="0"/>',
        to: '<xs:element name="value" type="xs:string" minOccurs="0"/>\n      <xs:element name="name" type="xs:string" minOccurs="0"/>',
      },
    ],
    bump: 'major',
    kind: 'member-order-changed',
    root: 'nameValue',
    direction: 'old-to-new',
  },
  {
    name: 'a new enumeration value',
    edits: [
      {
        file: PAL,
        from: '<xs:enumeration value="TEXTAREA"/>',
        to: '<xs:enumeration value="TEXTAREA"/>\n      <xs:enumeration value="DATE"/>',
      },
    ],
    bump: 'minor',
    kind: 'enum-value-added',
    root: 'consoleContent',
    direction: 'old-to-new',
  },
  {
    name: 'an enumeration value removed',
    edits: [{ file: PAL, from: /\s*<xs:enumeration value="TEXTAREA"\/>/, to: '' }],
    bump: 'major',
    kind: 'enum-value-removed',
    root: 'consoleContent',
    direction: 'old-to-new',
  },
  {
    name: 'a new root element',
    edits: [
      {
        file: PAL,
        from: '<xs:element name="nameValue" type="pal:NameValue"/>',
        to: '<xs:element name="nameValue" type="pal:NameValue"/>\n  <xs:element name="message" type="pal:Message"/>',
      },
    ],
    bump: 'minor',
    kind: 'root-added',
    root: 'nameValue',
    direction: 'old-to-new',
  },
  {
    name: 'a root element removed',
    edits: [{ file: PAL, from: '<xs:element name="palSearch" type="pal:PalSearch"/>', to: '' }],
    bump: 'major',
    kind: 'root-removed',
    root: 'palSearch',
    direction: 'old-to-new',
  },
  {
    name: "a list wrapper's item element renamed",
    edits: [
      {
        file: PAL,
        from: '<xs:element name="palInfo" type="pal:PalInfo" minOccurs="0" maxOccurs="unbounded"/>',
        to: '<xs:element name="pal" type="pal:PalInfo" minOccurs="0" maxOccurs="unbounded"/>',
      },
    ],
    bump: 'major',
    kind: 'list-item-element-changed',
    root: 'palInfoList',
    direction: 'old-to-new',
  },
  {
    name: 'a namespace changed',
    edits: [
      { file: SERVICES, from: /urn:pal-workflow:services/g, to: 'urn:pal-workflow:services:2' },
    ],
    bump: 'major',
    kind: 'namespace-changed',
    root: 'ServiceRequest',
    direction: 'old-to-new',
  },
  {
    name: 'documentation only',
    edits: [
      {
        file: PAL,
        from: '<xs:documentation>A pal summary.</xs:documentation>',
        to: '<xs:documentation>A summary of a pal.</xs:documentation>',
      },
    ],
    bump: 'patch',
    kind: 'documentation-changed',
    root: 'palInfo',
    direction: 'old-to-new',
  },
];

const XSD_FILES = defaultContext().xsdFiles;
const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));

describe.each(CASES)('$name', (c) => {
  const pair = makePair(c.edits);
  cleanups.push(pair.dispose);
  const before = loadContract(pair.before, 'before');
  const after = loadContract(pair.after, 'after');

  it(`is ${c.bump} (${c.kind})`, () => {
    const report = diffContracts(before, after);
    expect(report.changes.map((x) => x.kind)).toContain(c.kind);
    expect(report.bump).toBe(c.bump);
  });

  const [from, to] = c.direction === 'old-to-new' ? [before, pair.after] : [after, pair.before];
  const label =
    c.direction === 'old-to-new' ? 'old documents, new schema' : 'new documents, old schema';

  it(`holds on the wire (${label})`, () => {
    const documents = new DocumentArbitraries(from.model).document(c.root);
    const validator = new VersionValidator(to, XSD_FILES);
    try {
      const samples = fc.sample(documents, { numRuns: 150, seed: 42 });
      const invalid = samples.filter((xml) => !validator.valid(xml));
      if (c.bump === 'major') expect(invalid.length).toBeGreaterThan(0);
      else expect(invalid).toEqual([]);
    } finally {
      validator.dispose();
    }
  });
});

describe('the document generator', () => {
  it('writes documents the schemas they come from accept (no false proof)', () => {
    const contract = loadContract(makeSelf(), 'self');
    const validator = new VersionValidator(selfRoot!, XSD_FILES);
    try {
      for (const root of contract.model.roots.filter((r) => r.type.kind === 'named')) {
        const samples = fc.sample(new DocumentArbitraries(contract.model).document(root.name), {
          numRuns: 40,
          seed: 7,
        });
        expect(
          samples.filter((xml) => !validator.valid(xml)),
          root.name,
        ).toEqual([]);
      }
    } finally {
      validator.dispose();
    }
  });
});

let selfRoot: string | undefined;
function makeSelf(): string {
  const pair = makePair([]);
  cleanups.push(pair.dispose);
  selfRoot = pair.before;
  return pair.before;
}
