/**
 * Content negotiation (docs/decisions.md, "Wire format"): an absent Accept, or one that allows
 * anything, gives XML; q-values are honoured, other media-type parameters ignored; text/plain only
 * for simple (string, boolean, int) responses.
 */
import Negotiator from 'negotiator';

export type Format = 'xml' | 'json' | 'text';

export const MEDIA_TYPE: Record<Format, string> = {
  xml: 'application/xml',
  json: 'application/json',
  text: 'text/plain',
};

const OFFERS_SIMPLE = ['application/xml', 'application/json', 'text/plain', 'text/xml'];
const OFFERS_STRUCTURED = ['application/xml', 'application/json', 'text/xml'];

const BY_MEDIA_TYPE: Record<string, Format> = {
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/json': 'json',
  'text/plain': 'text',
};

// Clients send few distinct Accept headers: remember the answers (the map starts afresh when full).
const MEMO_MAX = 256;
const memo = new Map<string, Format | undefined>();

/** The format to answer in, or undefined when nothing acceptable is on offer (406). */
export function negotiate(accept: string | undefined, simple: boolean): Format | undefined {
  if (accept === undefined || accept.trim() === '') return 'xml';
  const key = simple ? `s${accept}` : `o${accept}`;
  if (memo.has(key)) return memo.get(key);
  const chosen = new Negotiator({ headers: { accept: withoutParameters(accept) } }).mediaType(
    simple ? OFFERS_SIMPLE : OFFERS_STRUCTURED,
  );
  const format = chosen ? BY_MEDIA_TYPE[chosen] : undefined;
  if (memo.size >= MEMO_MAX) memo.clear();
  memo.set(key, format);
  return format;
}

/**
 * Keeps each media range's q-value and drops its other parameters: `application/json;
 * charset=utf-8` asks for the very type this service sends (always UTF-8), but Negotiator would
 * match it only against an offer with the same parameter.
 */
function withoutParameters(accept: string): string {
  return accept
    .split(',')
    .map((range) => {
      const [type, ...parameters] = range.split(';');
      const q = parameters.find((p) => /^\s*q\s*=/i.test(p));
      return q === undefined ? type!.trim() : `${type!.trim()};${q.trim()}`;
    })
    .join(',');
}
