// A workflow's return value, made into the operation's response (docs/workflows.md, "Output"):
// left-out members take their defaults, and the result must fit the response type of the generated
// zod schemas. A value that does not fit fails the run; the message names the member.
import type * as Wire from '@pal-workflow/types';
import { zConsoleResult, zNameValueList, zTransactionResult } from '@pal-workflow/validators';
import type { z } from 'zod';
import { walkJson } from '../json-walk.js';

/** The return value does not fit the response type. */
export class OutputError extends Error {
  override readonly name = 'OutputError';
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Parses with a generated schema; the first problems become one message naming their paths. */
export function fit<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  refuseProtoKeys(value, what);
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.map((key) =>
      typeof key === 'number' ? `[${key}]` : `.${String(key)}`,
    );
    const where = path.join('').replace(/^\./, '');
    return `${where === '' ? '(the value)' : where}: ${issue.message}`;
  });
  return fail(`the workflow returned a value that is not a ${what}: ${problems.join('; ')}`);
}

/**
 * A key "__proto__" fails the run, naming where: JSON.parse keeps it as data, but zod's records
 * assign their entries, so `payload.data.__proto__` was dropped without a word (or, holding an
 * object, became the map's prototype). The request refuses the key in both formats (400), so the
 * answer does not carry it either.
 */
function refuseProtoKeys(value: unknown, what: string): void {
  const found: string[] = [];
  walkJson(value, (member) => {
    if (member.inArray || member.key !== '__proto__') return;
    found.push(member.parentPath);
    return found.length === 3 ? 'stop' : undefined;
  });
  if (found.length > 0)
    fail(
      `the workflow returned a value that is not a ${what}: ${found
        .map((where) => `${where === '' ? '(the value)' : where}: the key "__proto__" is reserved`)
        .join('; ')}`,
    );
}

function fail(message: string): never {
  throw new OutputError(message);
}

function objectOrEmpty(value: unknown, what: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value))
    fail(`the workflow must return an object (a ${what}) or nothing, not ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** C5, C7. */
export function consoleResult(value: unknown, palId: string): Wire.ConsoleResult {
  const result = objectOrEmpty(value, 'ConsoleResult');
  return fit(zConsoleResult, { success: true, palId, ...result }, 'ConsoleResult');
}

/** T6. */
export function transactionResult(
  value: unknown,
  palId: string,
  transactionId: string,
): Wire.TransactionResult {
  const result = objectOrEmpty(value, 'TransactionResult');
  return fit(
    zTransactionResult,
    { success: true, palId, transactionId, recordsProcessed: 0, ...result },
    'TransactionResult',
  );
}

/** C2, T9: an array of {name, value}, or an object of name → string. */
export function nameValues(value: unknown): Wire.NameValue[] {
  if (value === undefined) return [];
  if (isPlainObject(value)) {
    return fit(
      zNameValueList,
      Object.entries(value).map(([name, item]) => ({ name, value: item })),
      'list of NameValue',
    );
  }
  if (!Array.isArray(value))
    fail(
      `the workflow must return an array of {name, value} or an object of name → string, not ${describe(value)}`,
    );
  return fit(zNameValueList, value, 'list of NameValue');
}
