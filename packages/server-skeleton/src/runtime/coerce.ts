/** Typed values from the strings of path parameters, headers, query strings and forms. */
import { badRequest } from './http-error.js';
import type { ParamSpec, ScalarType } from './operation-spec.js';

const INT32 = /^[+-]?\d{1,10}$/;

export function coerce(type: ScalarType, raw: string, where: string): string | boolean | number {
  switch (type) {
    case 'string':
      return raw;
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      if (v === 'true' || v === '1') return true;
      if (v === 'false' || v === '0') return false;
      throw badRequest(`${where}: expected true or false, got "${raw}"`);
    }
    case 'int': {
      const v = raw.trim();
      const n = Number(v);
      if (!INT32.test(v) || n < -2147483648 || n > 2147483647)
        throw badRequest(`${where}: expected a 32-bit integer, got "${raw}"`);
      return n;
    }
  }
}

export type RawValues = Record<string, string | string[] | undefined>;

/**
 * Reads the declared parameters from raw values. Missing required ones are a 400;
 * a parameter given twice is a 400 (it would be ambiguous), and so is one longer than
 * its maxLength; unknown ones are ignored.
 */
export function readParams(
  specs: readonly ParamSpec[],
  raw: RawValues,
  kind: string,
  lookup: (name: string) => string = (n) => n,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of specs) {
    const value = raw[lookup(spec.name)];
    const where = `${kind} ${spec.name}`;
    if (Array.isArray(value)) throw badRequest(`${where}: given more than once`);
    if (value === undefined || (value === '' && spec.type !== 'string')) {
      if (spec.required) throw badRequest(`${where}: required`);
      continue;
    }
    if (spec.maxLength !== undefined && value.length > spec.maxLength)
      throw badRequest(`${where}: must be at most ${spec.maxLength} characters`);
    out[spec.name] = coerce(spec.type, value, where);
  }
  return out;
}

/**
 * Search headers: absent booleans are false and an absent startRecord is 0 (docs/decisions.md,
 * "Searches").
 */
export function readSearch(
  specs: readonly ParamSpec[],
  headers: RawValues,
): Record<string, unknown> {
  const out = readParams(specs, headers, 'header', (n) => n.toLowerCase());
  for (const spec of specs) {
    if (out[spec.name] !== undefined) continue;
    if (spec.type === 'boolean') out[spec.name] = false;
    if (spec.type === 'int') out[spec.name] = 0;
  }
  if (typeof out.startRecord === 'number' && out.startRecord < 0)
    throw badRequest(`header startRecord: must be 0 or more, got ${out.startRecord}`);
  return out;
}
