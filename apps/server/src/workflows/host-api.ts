// The logic of the `pal` host API (docs/workflows.md), host-side: what one run may read, and the
// effects it asks for. Each `pal` method in the sandbox is a host function that calls
// `call(op, args)` with its arguments as plain data; a thrown TypeError reaches the workflow as an
// exception it may catch. Every effect is checked against RUN_BOUNDS as it is made, and a broken
// bound is sticky: the run fails with WORKFLOW_MEMORY even if the workflow catches the RangeError,
// and every later `pal` call throws it again, so a workflow cannot go on handing the host more.
// Nothing here touches the database: the engine applies the collected effects when the run
// succeeds, after checking each one again.
import type * as Wire from '@pal-workflow/types';
import { isXmlText } from '@pal-workflow/validators';
import { fieldValueProblem } from '../domain/web-permissions.js';
import type { RoleView, RunEffects, SandboxJob } from './job.js';
import { RUN_BOUNDS } from './limits.js';

/** The host operations, one per `pal` method (and `module` for `pal.call`). */
export const OPERATIONS = [
  'module',
  'log',
  'vars.get',
  'vars.set',
  'vars.all',
  'tx.get',
  'tx.setStatus',
  'tx.move',
  'roles.assign',
  'roles.remove',
  'roles.list',
  'mail.send',
  'documents.list',
  'documents.setField',
  'documents.clearSignature',
  'documents.completed',
  'documents.uploads',
] as const;
export type Operation = (typeof OPERATIONS)[number];

const MAX_NAME = 200;
const MAX_VALUE = 65_536;
const MAX_STATUS = 64;
const MAX_LOGS = 200;
const MAX_LOG_LINE = 4000;
const MAX_SUBJECT = 998;

/** An object argument whose JSON text is longer than RUN_BOUNDS.argumentLength: never copied. */
export class Oversized {
  constructor(readonly length: number) {}
}

/** An object argument that JSON.stringify refused (a cycle, a BigInt, a throwing getter). */
export class Unwritable {
  /** Writing it ran the guest out of memory (a toJSON or a getter that allocates without end). */
  constructor(readonly outOfMemory = false) {}
}

export class RunState {
  readonly logs: string[] = [];
  readonly effects: RunEffects = {
    // Without a prototype, a variable named __proto__ is a key like any other, not a setter.
    vars: Object.create(null) as Record<string, string>,
    moves: [],
    roles: [],
    mails: [],
    fields: [],
    clearedSignatures: [],
  };
  /** The first bound the run broke; once set, the run fails whatever the workflow does next. */
  broken?: string;
  private readonly vars: Map<string, string>;
  private roles: RoleView[];
  private readonly transaction: SandboxJob['transaction'];
  /**
   * The transaction was OPEN when the run started: its documents may change. Once it is not
   * (COMPLETED, CANCELLED, …), its completed PDFs are written and its forms closed.
   */
  private readonly documentsOpen: boolean;
  private readonly documents: Wire.Document[] | undefined;
  /** What the scope's names and values take, in UTF-8 bytes. */
  private scopeBytes = 0;
  /** Distinct names this run has set. */
  private namesSet = 0;

  constructor(private readonly job: SandboxJob) {
    this.vars = new Map(Object.entries(job.vars));
    for (const [name, value] of this.vars) this.scopeBytes += bytes(name) + bytes(value);
    this.roles = (job.roles ?? []).map((r) => ({ ...r }));
    this.transaction = job.transaction && { ...job.transaction };
    this.documentsOpen = job.transaction?.systemStatus === 'OPEN';
    this.documents =
      job.documents && (JSON.parse(JSON.stringify(job.documents)) as Wire.Document[]);
  }

  /** One call of a `pal` method; the value goes back to the guest. */
  call(op: Operation, args: unknown[]): unknown {
    if (this.broken !== undefined) throw new RangeError(this.broken);
    switch (op) {
      case 'module': {
        const name = args[0];
        return typeof name === 'string' && Object.hasOwn(this.job.modules, name)
          ? this.job.modules[name]
          : undefined;
      }
      case 'log':
        if (this.logs.length < MAX_LOGS) {
          const line = args.map(show).join(' ');
          this.logs.push(line.length > MAX_LOG_LINE ? `${line.slice(0, MAX_LOG_LINE)}…` : line);
        }
        return undefined;
      case 'vars.get':
        return this.vars.get(text('pal.vars.get: name', args[0], MAX_NAME));
      case 'vars.set': {
        const name = text('pal.vars.set: name', args[0], MAX_NAME);
        let value = args[1];
        if (typeof value === 'number' || typeof value === 'boolean') value = String(value);
        if (typeof value !== 'string')
          throw new TypeError(
            `pal.vars.set: value must be a string (numbers and booleans are converted), not ${kind(value)}`,
          );
        if (value.length > MAX_VALUE)
          throw new TypeError(`pal.vars.set: value is longer than ${MAX_VALUE} characters`);
        keepable('pal.vars.set: value', value);
        this.checkVariable(name, value);
        this.vars.set(name, value);
        this.effects.vars[name] = value;
        return undefined;
      }
      case 'vars.all':
        return Object.fromEntries(this.vars);
      case 'tx.get':
        return this.tx('pal.transaction')[args[0] as 'id'];
      case 'tx.setStatus': {
        const status = text('pal.transaction.setStatus: status', args[0], MAX_STATUS);
        this.tx('pal.transaction.setStatus').status = status;
        this.effects.status = status;
        return undefined;
      }
      case 'tx.move': {
        const event = args[0] as 'complete' | 'cancel';
        const tx = this.tx(`pal.transaction.${event}`);
        const rule = this.job.moves[event]!;
        if (!rule.from.includes(tx.systemStatus))
          throw new TypeError(
            `pal.transaction.${event}: cannot ${event} a transaction whose systemStatus is ${tx.systemStatus} (allowed from ${rule.from.join(', ')})`,
          );
        tx.systemStatus = rule.to;
        this.effects.moves.push(event);
        return undefined;
      }
      case 'roles.assign': {
        this.tx('pal.roles.assign');
        const sso = text('pal.roles.assign: sso', args[0], MAX_NAME);
        const role = text('pal.roles.assign: role', args[1], MAX_STATUS);
        this.checkRoleChange('pal.roles.assign');
        if (!this.roles.some((r) => r.sso === sso && r.role === role)) {
          if (this.roles.length >= RUN_BOUNDS.rolesPerTransaction)
            this.breakBound(
              `pal.roles.assign: the transaction would hold more than ${RUN_BOUNDS.rolesPerTransaction} roles`,
            );
          this.roles.push({ sso, role });
        }
        this.effects.roles.push({ op: 'assign', sso, role });
        return undefined;
      }
      case 'roles.remove': {
        this.tx('pal.roles.remove');
        const sso = text('pal.roles.remove: sso', args[0], MAX_NAME);
        this.checkRoleChange('pal.roles.remove');
        this.roles = this.roles.filter((r) => r.sso !== sso);
        this.effects.roles.push({ op: 'remove', sso });
        return undefined;
      }
      case 'roles.list':
        this.tx('pal.roles.list');
        return this.roles.map((r) => ({ ...r }));
      case 'mail.send': {
        this.tx('pal.mail.send');
        const message = args[0];
        if (message instanceof Oversized)
          throw new TypeError(
            `pal.mail.send: the message is longer than ${RUN_BOUNDS.argumentLength} characters of JSON`,
          );
        if (message === null || typeof message !== 'object' || message instanceof Unwritable)
          throw new TypeError('pal.mail.send: expects an object {to, subject, text, action}');
        const m = message as Record<string, unknown>;
        if (this.effects.mails.length >= RUN_BOUNDS.mailsPerRun)
          this.breakBound(`pal.mail.send: a run may send at most ${RUN_BOUNDS.mailsPerRun} mails`);
        this.effects.mails.push({
          to: text('pal.mail.send: to', m.to, MAX_NAME),
          subject: text('pal.mail.send: subject', m.subject, MAX_SUBJECT),
          text: text('pal.mail.send: text', m.text, MAX_VALUE),
          action: text('pal.mail.send: action', m.action, MAX_NAME),
        });
        return undefined;
      }
      case 'documents.list':
        return this.documentsOf('pal.documents.list');
      case 'documents.completed': {
        const documents = this.documentsOf('pal.documents.completed');
        const file = text('pal.documents.completed: file', args[0], MAX_NAME * 5);
        if (!documents.some((d) => d.filename === file))
          throw new TypeError(`pal.documents.completed: the transaction has no document "${file}"`);
        const completed = this.job.completedDocuments;
        return completed && Object.hasOwn(completed, file) ? completed[file] : null;
      }
      case 'documents.uploads':
        this.tx('pal.documents.uploads');
        return (this.job.uploads ?? []).map((u) => ({ ...u }));
      case 'documents.setField': {
        const documents = this.changingDocuments('pal.documents.setField');
        const file = text('pal.documents.setField: file', args[0], MAX_NAME * 5);
        const fieldId = text('pal.documents.setField: fieldId', args[1], MAX_NAME);
        let value = args[2];
        if (typeof value === 'number' || typeof value === 'boolean') value = String(value);
        if (typeof value !== 'string')
          throw new TypeError(
            `pal.documents.setField: value must be a string (numbers and booleans are converted), not ${kind(value)}`,
          );
        if (value.length > MAX_VALUE)
          throw new TypeError(
            `pal.documents.setField: value is longer than ${MAX_VALUE} characters`,
          );
        keepable('pal.documents.setField: value', value);
        const document = documents.find((d) => d.filename === file);
        if (!document)
          throw new TypeError(`pal.documents.setField: the transaction has no document "${file}"`);
        const field = document.fields?.find((f) => f.id === fieldId);
        if (!field)
          throw new TypeError(`pal.documents.setField: "${file}" has no field "${fieldId}"`);
        const problem = fieldValueProblem(field, value);
        if (problem) throw new TypeError(`pal.documents.setField: "${fieldId}": ${problem}`);
        if (this.effects.fields.length >= RUN_BOUNDS.namesPerRun)
          this.breakBound(
            `pal.documents.setField: a run may set at most ${RUN_BOUNDS.namesPerRun} field values`,
          );
        field.value = value;
        this.effects.fields.push({ file, fieldId, value });
        return undefined;
      }
      case 'documents.clearSignature': {
        const documents = this.changingDocuments('pal.documents.clearSignature');
        const file = text('pal.documents.clearSignature: file', args[0], MAX_NAME * 5);
        const signatureId = text('pal.documents.clearSignature: signatureId', args[1], MAX_NAME);
        const document = documents.find((d) => d.filename === file);
        if (!document)
          throw new TypeError(
            `pal.documents.clearSignature: the transaction has no document "${file}"`,
          );
        const signature = document.signatures?.find((s) => s.id === signatureId);
        if (!signature)
          throw new TypeError(
            `pal.documents.clearSignature: "${file}" has no signature "${signatureId}"`,
          );
        // Each signature of each document at most once: the manifest bounds how many there are.
        if (
          !this.effects.clearedSignatures.some(
            (c) => c.file === file && c.signatureId === signatureId,
          )
        )
          this.effects.clearedSignatures.push({ file, signatureId });
        signature.recordTime = 0;
        return undefined;
      }
    }
  }

  private documentsOf(what: string): Wire.Document[] {
    this.tx(what);
    return this.documents ?? [];
  }

  /** The documents, for a change: only while the transaction is OPEN (a TypeError otherwise). */
  private changingDocuments(what: string): Wire.Document[] {
    const documents = this.documentsOf(what);
    if (!this.documentsOpen)
      throw new TypeError(
        `${what}: the transaction is ${this.transaction!.systemStatus}; its documents change only while it is OPEN`,
      );
    return documents;
  }

  /** RUN_BOUNDS on variables, checked before `name` is set to `value`. */
  private checkVariable(name: string, value: string): void {
    if (!Object.hasOwn(this.effects.vars, name)) {
      if (this.namesSet >= RUN_BOUNDS.namesPerRun)
        this.breakBound(`pal.vars.set: a run may set at most ${RUN_BOUNDS.namesPerRun} variables`);
      this.namesSet++;
    }
    const scope = this.transaction ? 'this transaction' : 'this pal';
    const previous = this.vars.get(name);
    if (previous === undefined && this.vars.size >= RUN_BOUNDS.namesPerScope)
      this.breakBound(
        `pal.vars.set: the variables of ${scope} would hold more than ${RUN_BOUNDS.namesPerScope} names`,
      );
    const growth =
      previous === undefined ? bytes(name) + bytes(value) : bytes(value) - bytes(previous);
    // A scope already past the bound (kept before the bound existed) may still shrink.
    if (growth > 0 && this.scopeBytes + growth > RUN_BOUNDS.bytesPerScope)
      this.breakBound(
        `pal.vars.set: the variables of ${scope} would take more than ${RUN_BOUNDS.bytesPerScope} bytes`,
      );
    this.scopeBytes += growth;
  }

  private checkRoleChange(what: string): void {
    if (this.effects.roles.length >= RUN_BOUNDS.roleChangesPerRun)
      this.breakBound(
        `${what}: a run may make at most ${RUN_BOUNDS.roleChangesPerRun} role changes`,
      );
  }

  private breakBound(message: string): never {
    this.broken = message;
    throw new RangeError(message);
  }

  private tx(what: string): NonNullable<SandboxJob['transaction']> {
    if (!this.transaction) throw new TypeError(`${what} is only available in transaction runs`);
    return this.transaction;
  }
}

/** A log argument as text: strings as they are, anything else as JSON where it can be. */
function show(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Oversized) return `[a value of ${value.length} characters of JSON]`;
  if (value instanceof Unwritable) return '[a value that cannot be written as JSON]';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function kind(value: unknown): string {
  if (value instanceof Oversized || value instanceof Unwritable) return 'object';
  return value === null ? 'null' : typeof value;
}

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function text(where: string, value: unknown, max: number): string {
  if (typeof value !== 'string')
    throw new TypeError(`${where} must be a string, not ${kind(value)}`);
  if (value.length === 0) throw new TypeError(`${where} must not be empty`);
  if (value.length > max) throw new TypeError(`${where} is longer than ${max} characters`);
  return keepable(where, value);
}

/**
 * What a run keeps (variables, field values, statuses, roles, mails) is text XML can carry, as
 * every string an operation takes: a NUL, another control character or a lone surrogate would be
 * refused by PostgreSQL's text (NUL), or by every XML and NameValue answer that holds it later.
 */
function keepable(where: string, value: string): string {
  if (!isXmlText(value))
    throw new TypeError(
      `${where} holds a character that cannot be kept (a NUL, another control character but tab and line breaks, or a lone surrogate)`,
    );
  return value;
}
