/** Typed values from the strings of path parameters, headers, query strings and forms. */
import { isXmlText } from '@pal-workflow/validators';
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

/** Characters as XSD's maxLength counts them: code points, not UTF-16 units. */
function characterCount(value: string, atMost: number): number {
  if (value.length <= atMost) return value.length;
  let n = 0;
  for (const _ of value) if (++n > atMost) break;
  return n;
}

// A byte-order mark in a value is a character of it, as any other.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** RFC 8187's ext-value: charset, an optional language, then attr-chars and %XX escapes. */
const EXT_VALUE = /^(utf-8|iso-8859-1)'[A-Za-z0-9-]*'(.*)$/is;
const EXT_VALUE_CHARS = /^(?:[A-Za-z0-9!#$&+.^_`|~-]|%[0-9A-Fa-f]{2})*$/;
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * A header's value as the text the client meant (docs/decisions.md, "Searches"). Node hands
 * header values over byte for byte (Latin-1), so raw UTF-8 bytes, which curl sends, are read
 * again as UTF-8; bytes that are not UTF-8 stay Latin-1, as a browser's fetch sends them. A value
 * in RFC 8187's form `UTF-8''M%C3%BCller` (or its `ISO-8859-1''M%FCller`), which a fetch-based
 * client must send for text beyond Latin-1, is decoded; one that does not decode is a 400.
 */
export function headerText(raw: string, where: string): string {
  const ext = EXT_VALUE.exec(raw);
  if (ext) {
    const latin1 = ext[1]!.toLowerCase() === 'iso-8859-1';
    const encoded = ext[2]!;
    if (!EXT_VALUE_CHARS.test(encoded))
      throw badRequest(
        `${where}: an RFC 8187 value (UTF-8'') may hold only letters, digits, some signs and %XX escapes`,
      );
    // Each %XX is one byte; read as one character each, the bytes are the Latin-1 text.
    const bytes = encoded.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    if (latin1) return bytes;
    try {
      return UTF8.decode(Buffer.from(bytes, 'latin1'));
    } catch {
      throw badRequest(`${where}: the RFC 8187 value's %XX escapes are not UTF-8`);
    }
  }
  if (!NOT_ASCII.test(raw)) return raw;
  try {
    return UTF8.decode(Buffer.from(raw, 'latin1'));
  } catch {
    return raw;
  }
}

/**
 * Reads the declared parameters from raw values. Missing required ones are a 400;
 * a parameter given twice is a 400 (it would be ambiguous), and so is one longer than
 * its maxLength, not one of its enum's values, or holding a character XML cannot carry;
 * unknown ones are ignored.
 */
export function readParams(
  specs: readonly ParamSpec[],
  raw: RawValues,
  kind: string,
  lookup: (name: string) => string = (n) => n,
  text: (raw: string, where: string) => string = (v) => v,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of specs) {
    const given = raw[lookup(spec.name)];
    // Most declared parameters (search headers) are absent: they cost no string of their own.
    if (given === undefined || (given === '' && spec.type !== 'string')) {
      if (spec.required) throw badRequest(`${kind} ${spec.name}: required`);
      continue;
    }
    const where = `${kind} ${spec.name}`;
    if (Array.isArray(given)) throw badRequest(`${where}: given more than once`);
    const value = text(given, where);
    if (spec.maxLength !== undefined && characterCount(value, spec.maxLength) > spec.maxLength)
      throw badRequest(`${where}: must be at most ${spec.maxLength} characters`);
    if (spec.enum && !spec.enum.includes(value))
      throw badRequest(`${where}: must be one of ${spec.enum.join(', ')}`);
    // Every parameter is an xs:string or a number; a character XML cannot carry is refused here,
    // as in a body, rather than echoed into an answer that no XML parser would read.
    if (spec.type === 'string' && !isXmlText(value))
      throw badRequest(`${where}: contains a character that XML cannot carry`);
    out[spec.name] = coerce(spec.type, value, where);
  }
  return out;
}

// Node names received headers in lower case; the declared names are few and asked on every search.
const headerKeys = new Map<string, string>();
function headerKey(name: string): string {
  let key = headerKeys.get(name);
  if (key === undefined) headerKeys.set(name, (key = name.toLowerCase()));
  return key;
}

/**
 * Search headers: their values are UTF-8 text (headerText); absent booleans are false and an
 * absent startRecord is 0 (docs/decisions.md, "Searches").
 */
export function readSearch(
  specs: readonly ParamSpec[],
  headers: RawValues,
  /** Each header's values as sent (node's `headersDistinct`), asked only of a joined value. */
  distinct?: () => Record<string, string[] | undefined>,
): Record<string, unknown> {
  // Node joins a header sent twice with ", " (a filter may hold one of its own): a joined value
  // is a parameter given twice, as a repeated form field is. Judged before the values are read,
  // so that `startRecord` sent twice says so, not that "1, 2" is no integer.
  if (distinct)
    for (const spec of specs) {
      const raw = headers[headerKey(spec.name)];
      if (typeof raw !== 'string' || !raw.includes(', ')) continue;
      const sent = distinct()[headerKey(spec.name)];
      if (sent && sent.length > 1) throw badRequest(`header ${spec.name}: given more than once`);
    }
  const out = readParams(specs, headers, 'header', headerKey, headerText);
  for (const spec of specs) {
    if (out[spec.name] !== undefined) continue;
    if (spec.type === 'boolean') out[spec.name] = false;
    if (spec.type === 'int') out[spec.name] = 0;
  }
  if (typeof out.startRecord === 'number' && out.startRecord < 0)
    throw badRequest(`header startRecord: must be 0 or more, got ${out.startRecord}`);
  return out;
}
