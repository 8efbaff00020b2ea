/**
 * How many elements (XML) or values (JSON) a body holds, counted before it is parsed: a parse
 * costs the event loop about a microsecond an element, so 25 MiB of `<postData>` would hold every
 * other request for seconds, while a document of that size (one base64 string) costs nothing.
 * Counting stops at the limit, and costs no more than reading the text.
 */
import { HttpError } from './http-error.js';

/** The most elements or values a body may hold by default. */
export const DEFAULT_BODY_ITEM_LIMIT = 100_000;

/** A 413 when `text` holds more than `limit` elements (XML) or values (JSON). */
export function checkBodyItems(text: string, kind: 'xml' | 'json', limit: number): void {
  const over = kind === 'xml' ? xmlElementsOver(text, limit) : jsonValuesOver(text, limit);
  if (over)
    throw new HttpError(
      413,
      'PAYLOAD_TOO_LARGE',
      `the body holds more than ${limit} ${kind === 'xml' ? 'elements' : 'values'}`,
    );
}

/**
 * Start tags: a `<` not followed by `/`, `!` or `?`. A `<` in a CDATA section or a comment counts
 * too, which only errs towards the limit.
 */
function xmlElementsOver(text: string, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf('<'); at !== -1; at = text.indexOf('<', at + 1)) {
    const next = text.charCodeAt(at + 1);
    if (next !== 0x2f && next !== 0x21 && next !== 0x3f && ++count > limit) return true;
  }
  return false;
}

const JSON_SPECIAL = /[{[,"]/g;

/**
 * Objects, arrays and the commas between their members, outside strings: one for each value in
 * a container, near enough. Strings are skipped whole.
 */
function jsonValuesOver(text: string, limit: number): boolean {
  const special = new RegExp(JSON_SPECIAL);
  let count = 0;
  for (let match = special.exec(text); match; match = special.exec(text)) {
    if (match[0] !== '"') {
      if (++count > limit) return true;
      continue;
    }
    let end = match.index;
    do end = text.indexOf('"', end + 1);
    while (end !== -1 && escaped(text, end));
    if (end === -1) return false;
    special.lastIndex = end + 1;
  }
  return false;
}

/** Whether the character at `at` follows an odd number of backslashes. */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
  return slashes % 2 === 1;
}
