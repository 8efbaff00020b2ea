/**
 * zod schemas of the XSD built-ins the contract uses, defined once: the generated schemas
 * and the codecs refer to these. Strings are held to what XML can carry: xs:string allows only
 * XML characters, xs:base64Binary only base64 text.
 */
import { z } from 'zod';

// The XML 1.0 Char production: no control characters but tab, LF and CR, no lone surrogates.
const XML_CHARS = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

export const xsString = z.string().regex(XML_CHARS, 'contains a character that XML cannot carry');

/** Whether every character of `text` is one XML can carry (xsString's rule, without zod). */
export function isXmlText(text: string): boolean {
  return XML_CHARS.test(text);
}

const NOT_A_MAP_KEY = 'the key contains a character that XML cannot carry';
// Its own message too, for a walk that checks keys without the record (first-issues.ts).
const xsMapKey = z.string().regex(XML_CHARS, NOT_A_MAP_KEY);

/**
 * A map (a list of `entry` with an xs:string `key`) as a JSON object. Its keys are held to XML's
 * characters as its values are: JSON took `{"a\u0001": …}` that XML refuses, and an answer with
 * such a key reached XML with U+FFFD in its place.
 */
export function xsMap<V extends z.ZodType>(value: V) {
  return z.record(xsMapKey, value, {
    error: (issue) => (issue.code === 'invalid_key' ? NOT_A_MAP_KEY : undefined),
  });
}

export const xsBase64Binary = z.base64();

export const xsBoolean = z.boolean();

export const xsInt = z.int32();

export const xsUnsignedShort = z.int().min(0).max(65535);
