// What a person in a browser session may do now (docs/pal-format.md, "Actions"; docs/web-mode.md):
// which of the manifest's actions are offered to them, which fields they may edit, which
// signatures and uploads are theirs. Pure rules over the manifest and the transaction's state,
// shared by the session page (what it shows) and the posted form (what it accepts), so the two
// cannot disagree.
import type * as Wire from '@pal-workflow/types';
import { FieldType } from '@pal-workflow/types';
import { RUNNABLE_SYSTEM_STATUSES } from './transaction-lifecycle.js';

/** One of the manifest's `actions`: an export a browser session may run, shown as a button. */
export interface PalAction {
  /** The export of the session's module (`transaction` or `console`). */
  name: string;
  /** The button's text. */
  label: string;
  /** `|`-list of roles it is offered to; absent: every role. */
  roles?: string;
  /** `|`-list of business statuses it is offered in; absent: any. */
  statuses?: string;
  /** Ids of signatures it needs from the person who runs it (beside the `required` ones). */
  signatures?: string[];
}

/** The manifest's `actions`, by module. */
export interface PalActions {
  transaction?: PalAction[];
  console?: PalAction[];
}

/** Where a person stands: their role (null in a console session) and the transaction's state. */
export interface PersonPlace {
  role: string | null;
  /** Null in a console session. */
  transaction: { status: string; systemStatus: string } | null;
}

/** The items of a `|`-list; an absent or empty list is none. */
export function listItems(list: string | undefined): string[] {
  return list === undefined || list === '' ? [] : list.split('|');
}

/** An absent or empty `|`-list allows everyone; otherwise `item` must be in it. */
function allows(list: string | undefined, item: string | null): boolean {
  const items = listItems(list);
  return items.length === 0 || (item !== null && items.includes(item));
}

/**
 * The actions offered to the person now, in the manifest's order. In a transaction: those whose
 * `roles` hold the person's role and whose `statuses` hold the business status, while the
 * transaction's systemStatus lets its workflows run. In a console session, every console action
 * (console actions have no roles or statuses: the console grant is the permission).
 */
export function offeredActions(actions: PalActions | undefined, place: PersonPlace): PalAction[] {
  const { transaction } = place;
  if (transaction === null) return [...actionsOfPlace(actions, place)];
  if (!(RUNNABLE_SYSTEM_STATUSES as readonly string[]).includes(transaction.systemStatus))
    return [];
  return actionsOfPlace(actions, place).filter(
    (a) => allows(a.roles, place.role) && allows(a.statuses, transaction.status),
  );
}

/** The manifest's actions of the session's kind (console or transaction), offered or not. */
export function actionsOfPlace(
  actions: PalActions | undefined,
  place: PersonPlace,
): readonly PalAction[] {
  return (place.transaction === null ? actions?.console : actions?.transaction) ?? [];
}

/** The action named `name` if it is offered to the person now. */
export function offeredAction(
  actions: PalActions | undefined,
  place: PersonPlace,
  name: string,
): PalAction | undefined {
  return offeredActions(actions, place).find((a) => a.name === name);
}

/**
 * Whether the documents may change now: only while the transaction is OPEN (a completed
 * document is final), and never in a console session, which has no transaction to keep them.
 */
export function documentsOpen(place: PersonPlace): boolean {
  return place.transaction?.systemStatus === 'OPEN';
}

/** Whether the person may edit the field now: their role is in its `roles`, or it has none. */
export function fieldEditable(field: Pick<Wire.Field, 'roles'>, place: PersonPlace): boolean {
  return documentsOpen(place) && allows(field.roles, place.role);
}

/** Whether the person may give the upload now: while the documents are open, by its `roles`. */
export function uploadAllowed(upload: { roles?: string }, place: PersonPlace): boolean {
  return documentsOpen(place) && allows(upload.roles, place.role);
}

/** Whether the signature is for the person: its role is theirs. */
export function signatureIsMine(
  signature: Pick<Wire.Signature, 'role'>,
  place: Pick<PersonPlace, 'role'>,
): boolean {
  return place.role !== null && signature.role === place.role;
}

/**
 * Why `value` cannot be the field's value, or undefined: a checkbox holds "true" or "false", a
 * RADIO or SELECT one of its picklist's choices (or nothing).
 */
export function fieldValueProblem(field: Wire.Field, value: string): string | undefined {
  if (field.type === FieldType.CHECKBOX || field.type === FieldType.CHECKBOXCHECKED)
    return value === 'true' || value === 'false'
      ? undefined
      : `a ${field.type} field's value is "true" or "false"`;
  if (field.type === FieldType.RADIO || field.type === FieldType.SELECT) {
    const choices = (field.picklist ?? '').split('|');
    return value === '' || choices.includes(value)
      ? undefined
      : `"${value}" is not one of the field's choices (${choices.join(', ')})`;
  }
  return undefined;
}
