/**
 * How many items an XML or JSON body holds, counted before it is parsed: a parse costs the event
 * loop per item, so 25 MiB of `<postData>`, of attributes or of `&amp;` would hold every other
 * request for seconds, while a document of that size (one base64 string) costs nothing. Counting
 * stops at the limit, and costs no more than reading the text once.
 */
import { HttpError } from './http-error.js';

/** The most items a body may hold by default. */
export const DEFAULT_BODY_ITEM_LIMIT = 100_000;

/** Whether `text` holds more than `limit` items (see xmlItemsOver and jsonItemsOver). */
export function bodyItemsOver(text: string, kind: 'xml' | 'json', limit: number): boolean {
  return kind === 'xml' ? xmlItemsOver(text, limit) : jsonItemsOver(text, limit);
}

/** A 413 when `text` holds more than `limit` items (bodyItemsOver). */
export function checkBodyItems(text: string, kind: 'xml' | 'json', limit: number): void {
  if (bodyItemsOver(text, kind, limit))
    throw new HttpError(
      413,
      'PAYLOAD_TOO_LARGE',
      `the body holds more than ${limit} items (${kind === 'xml' ? 'tags, attributes and references' : 'values, members and strings'})`,
    );
}

/** Where each markup piece a parser pays for begins: a tag, comment, CDATA section or PI, an
 * attribute's `=`, an entity or character reference. End tags are paid for with their start. */
const XML_ITEM = /<(?!\/)|=|&/g;

/** Tags (but end tags), attributes and references; a `<` or `=` in text or CDATA counts too, which
 * only errs towards the limit (a base64 value's padding adds at most two). */
function xmlItemsOver(text: string, limit: number): boolean {
  const item = new RegExp(XML_ITEM);
  let count = 0;
  while (item.exec(text)) if (++count > limit) return true;
  return false;
}

const JSON_SPECIAL = /[{[,"]/g;

/**
 * Objects, arrays, the commas between members, and strings (keys and values); inside a string,
 * each escaped quote, so that a string of a million of them costs no more than the limit.
 */
function jsonItemsOver(text: string, limit: number): boolean {
  const special = new RegExp(JSON_SPECIAL);
  let count = 0;
  for (let match = special.exec(text); match; match = special.exec(text)) {
    if (++count > limit) return true;
    if (match[0] !== '"') continue;
    let end = match.index;
    for (;;) {
      end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      if (!escaped(text, end)) break;
      if (++count > limit) return true;
    }
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
