// The logic of the `pal` host API (DESIGN §7), host-side: what one run may read, and the effects
// it asks for. Each `pal` method in the sandbox is a host function that calls `call(op, args)`
// with its arguments as plain data; a thrown TypeError reaches the workflow as an exception it
// may catch. Nothing here touches the database: the engine applies
// the collected effects when the run succeeds, after checking each one again (effects.ts).
import type { RoleView, RunEffects, SandboxJob } from './job.js';

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
] as const;
export type Operation = (typeof OPERATIONS)[number];

const MAX_NAME = 200;
const MAX_VALUE = 65_536;
const MAX_STATUS = 64;
const MAX_LOGS = 200;
const MAX_LOG_LINE = 4000;
const MAX_MAILS = 20;
const MAX_SUBJECT = 998;

export class RunState {
  readonly logs: string[] = [];
  readonly effects: RunEffects = { vars: {}, moves: [], roles: [], mails: [] };
  private readonly vars: Map<string, string>;
  private roles: RoleView[];
  private readonly transaction: SandboxJob['transaction'];

  constructor(private readonly job: SandboxJob) {
    this.vars = new Map(Object.entries(job.vars));
    this.roles = (job.roles ?? []).map((r) => ({ ...r }));
    this.transaction = job.transaction && { ...job.transaction };
  }

  /** One call of a `pal` method; the value goes back to the guest. */
  call(op: Operation, args: unknown[]): unknown {
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
        if (!this.roles.some((r) => r.sso === sso && r.role === role))
          this.roles.push({ sso, role });
        this.effects.roles.push({ op: 'assign', sso, role });
        return undefined;
      }
      case 'roles.remove': {
        this.tx('pal.roles.remove');
        const sso = text('pal.roles.remove: sso', args[0], MAX_NAME);
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
        if (message === null || typeof message !== 'object')
          throw new TypeError('pal.mail.send: expects an object {to, subject, text, action}');
        const m = message as Record<string, unknown>;
        if (this.effects.mails.length >= MAX_MAILS)
          throw new TypeError(`pal.mail.send: at most ${MAX_MAILS} mails per run`);
        this.effects.mails.push({
          to: text('pal.mail.send: to', m.to, MAX_NAME),
          subject: text('pal.mail.send: subject', m.subject, MAX_SUBJECT),
          text: text('pal.mail.send: text', m.text, MAX_VALUE),
          action: text('pal.mail.send: action', m.action, MAX_NAME),
        });
        return undefined;
      }
    }
  }

  private tx(what: string): NonNullable<SandboxJob['transaction']> {
    if (!this.transaction) throw new TypeError(`${what} is only available in transaction runs`);
    return this.transaction;
  }
}

/** A log argument as text: strings as they are, anything else as JSON where it can be. */
function show(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function kind(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

function text(where: string, value: unknown, max: number): string {
  if (typeof value !== 'string')
    throw new TypeError(`${where} must be a string, not ${kind(value)}`);
  if (value.length === 0) throw new TypeError(`${where} must not be empty`);
  if (value.length > max) throw new TypeError(`${where} is longer than ${max} characters`);
  return value;
}
