import { describe, expect, it } from 'vitest';
import { ManifestError, parsePalManifest } from './pal-manifest.js';
import {
  fieldEditable,
  offeredAction,
  offeredActions,
  signatureIsMine,
  type PalActions,
  type PersonPlace,
} from './web-permissions.js';

const ACTIONS: PalActions = {
  transaction: [
    {
      name: 'submit',
      label: 'Submit the claim',
      roles: 'participant|owner',
      statuses: 'NEW|RETURNED',
    },
    { name: 'approve', label: 'Approve', roles: 'manager', statuses: 'SUBMITTED' },
    { name: 'comment', label: 'Add a comment' },
  ],
  console: [{ name: 'report', label: 'Monthly report' }],
};

const at = (role: string | null, status: string, systemStatus = 'OPEN'): PersonPlace => ({
  role,
  transaction: { status, systemStatus },
});
const names = (place: PersonPlace) => offeredActions(ACTIONS, place).map((a) => a.name);

describe('offeredActions', () => {
  it('offers an action to a role in its roles while the status is in its statuses', () => {
    expect(names(at('participant', 'NEW'))).toEqual(['submit', 'comment']);
    expect(names(at('owner', 'RETURNED'))).toEqual(['submit', 'comment']);
    expect(names(at('manager', 'SUBMITTED'))).toEqual(['approve', 'comment']);
  });

  it('offers nothing of another role or another status', () => {
    expect(names(at('manager', 'NEW'))).toEqual(['comment']);
    expect(names(at('participant', 'SUBMITTED'))).toEqual(['comment']);
    expect(names(at('anonymous', 'NEW'))).toEqual(['comment']);
    expect(offeredAction(ACTIONS, at('participant', 'NEW'), 'approve')).toBeUndefined();
    expect(offeredAction(ACTIONS, at('manager', 'SUBMITTED'), 'approve')?.label).toBe('Approve');
  });

  it('offers nothing while the systemStatus forbids runs, and runs on a COMPLETED one', () => {
    for (const s of ['CANCELLED', 'EXPIRED', 'ARCHIVED'])
      expect(names(at('participant', 'NEW', s))).toEqual([]);
    expect(names(at('participant', 'NEW', 'COMPLETED'))).toEqual(['submit', 'comment']);
  });

  it('offers every console action in a console session, and nothing without actions', () => {
    expect(offeredActions(ACTIONS, { role: null, transaction: null }).map((a) => a.name)).toEqual([
      'report',
    ]);
    expect(offeredActions(undefined, at('owner', 'NEW'))).toEqual([]);
  });

  it('matches whole roles and statuses, not parts of them', () => {
    expect(names(at('own', 'NEW'))).toEqual(['comment']);
    expect(names(at('participant', 'NE'))).toEqual(['comment']);
  });
});

describe('fieldEditable and signatureIsMine', () => {
  it('lets a role in the field roles edit it, and everyone when it has none, while OPEN', () => {
    expect(fieldEditable({ roles: 'owner|manager' }, at('manager', 'X'))).toBe(true);
    expect(fieldEditable({ roles: 'owner|manager' }, at('participant', 'X'))).toBe(false);
    expect(fieldEditable({}, at('anonymous', 'X'))).toBe(true);
    expect(fieldEditable({ roles: '' }, at('participant', 'X'))).toBe(true);
    expect(fieldEditable({}, at('owner', 'X', 'COMPLETED'))).toBe(false);
    expect(fieldEditable({}, { role: null, transaction: null })).toBe(false);
  });

  it('gives a signature to the person of its role only', () => {
    expect(signatureIsMine({ role: 'manager' }, { role: 'manager' })).toBe(true);
    expect(signatureIsMine({ role: 'manager' }, { role: 'owner' })).toBe(false);
    expect(signatureIsMine({}, { role: null })).toBe(false);
  });
});

describe('the manifest actions', () => {
  const FILE = 'x/pal.json';
  const refused = (actions: unknown): string => {
    try {
      parsePalManifest({ id: 'p', actions }, FILE);
    } catch (error) {
      expect(error).toBeInstanceOf(ManifestError);
      return (error as Error).message;
    }
    throw new Error('expected the manifest to be refused');
  };

  it('keeps valid actions as given', () => {
    expect(parsePalManifest({ id: 'p', actions: ACTIONS }, FILE).actions).toEqual(ACTIONS);
  });

  it('refuses each kind of wrong action with FILE: KEY: what is wrong', () => {
    expect(refused({ transaction: [{ name: 'not-an-export', label: 'X' }] })).toBe(
      `${FILE}: actions.transaction[0].name: expected the name of an export of the module (a JavaScript identifier)`,
    );
    expect(refused({ transaction: [{ name: 'submit' }] })).toBe(
      `${FILE}: actions.transaction[0].label: is required (expected string)`,
    );
    expect(refused({ transaction: [{ name: 'submit', label: 'x'.repeat(81) }] })).toBe(
      `${FILE}: actions.transaction[0].label: must be at most 80 characters`,
    );
    expect(refused({ transaction: [{ name: 'submit', label: '  ' }] })).toBe(
      `${FILE}: actions.transaction[0].label: must not be empty`,
    );
    expect(refused({ transaction: [{ name: 'a', label: 'A', roles: 'owner||manager' }] })).toBe(
      `${FILE}: actions.transaction[0].roles: has an empty role (between "|")`,
    );
    expect(refused({ transaction: [{ name: 'a', label: 'A', statuses: 'NEW|NEW' }] })).toBe(
      `${FILE}: actions.transaction[0].statuses: names the status "NEW" twice`,
    );
    expect(
      refused({
        transaction: [
          { name: 'a', label: 'A' },
          { name: 'a', label: 'B' },
        ],
      }),
    ).toBe(
      `${FILE}: actions.transaction[1].name: "a" is already the name of actions.transaction[0]`,
    );
    expect(refused({ console: [{ name: 'a', label: 'A', roles: 'owner' }] })).toBe(
      `${FILE}: actions.console[0].roles: console actions have no roles or statuses (the console grant decides)`,
    );
    expect(refused({ console: [{ name: 'a', label: 'A', signatures: ['s'] }] })).toBe(
      `${FILE}: actions.console[0].signatures: console actions have no signatures (a console session signs nothing)`,
    );
    expect(refused({ user: [] })).toBe(`${FILE}: actions.user: unknown key`);
    expect(refused({ transaction: [{ name: 'a', label: 'A', button: 'x' }] })).toBe(
      `${FILE}: actions.transaction[0].button: unknown key`,
    );
  });

  it("checks an action's signatures against the documents' and the action's roles", () => {
    const signature = (id: string, role: string) => ({
      id,
      role,
      page: 1,
      x: 0,
      y: 0,
      customWidth: 10,
      customHeight: 10,
    });
    const manifest = (actions: unknown) => ({
      id: 'p',
      documents: [
        {
          file: 'documents/a.pdf',
          signatures: [signature('boss|sig', 'manager'), signature('mine', 'owner')],
        },
      ],
      actions: { transaction: actions },
    });
    const approve = { name: 'approve', label: 'Approve', roles: 'manager' };
    expect(
      parsePalManifest(manifest([{ ...approve, signatures: ['boss|sig'] }]), FILE).actions,
    ).toEqual({ transaction: [{ ...approve, signatures: ['boss|sig'] }] });
    // Offered to every role: any signature of the documents.
    expect(() =>
      parsePalManifest(manifest([{ name: 'a', label: 'A', signatures: ['mine'] }]), FILE),
    ).not.toThrow();
    const refusedManifest = (actions: unknown) => {
      try {
        parsePalManifest(manifest(actions), FILE);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected the manifest to be refused');
    };
    expect(refusedManifest([{ ...approve, signatures: ['boss'] }])).toBe(
      `${FILE}: actions.transaction[0].signatures[0]: "boss" is not the id of a signature in the documents`,
    );
    expect(refusedManifest([{ ...approve, signatures: ['boss|sig', 'mine'] }])).toBe(
      `${FILE}: actions.transaction[0].signatures[1]: "mine" is signed by the role owner, to which this action is not offered`,
    );
    expect(refusedManifest([{ ...approve, signatures: ['boss|sig', 'boss|sig'] }])).toBe(
      `${FILE}: actions.transaction[0].signatures: names the signature "boss|sig" twice`,
    );
  });

  it('refuses wrong uploads, and fills their defaults', () => {
    const FILE = 'x/pal.json';
    const manifest = parsePalManifest({ id: 'p', uploads: [{ name: 'id', label: 'ID' }] }, FILE);
    expect(manifest.uploads).toEqual([
      {
        name: 'id',
        label: 'ID',
        accept: 'application/pdf|image/png|image/jpeg',
        required: false,
      },
    ]);
    const refused = (uploads: unknown) => {
      try {
        parsePalManifest({ id: 'p', uploads }, FILE);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('expected the manifest to be refused');
    };
    expect(refused([{ name: 'id', label: 'ID', accept: 'image/gif' }])).toBe(
      `${FILE}: uploads[0].accept: expected a "|"-list of application/pdf, image/png, image/jpeg`,
    );
    expect(
      refused([
        { name: 'id', label: 'ID' },
        { name: 'id', label: 'Again' },
      ]),
    ).toBe(`${FILE}: uploads[1].name: "id" is already the name of uploads[0]`);
    expect(refused([{ name: '../x', label: 'X' }])).toBe(
      `${FILE}: uploads[0].name: expected 1 to 64 letters, digits, "_" or "-", starting with a letter or digit`,
    );
  });
});
