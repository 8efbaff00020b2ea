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
// text/xml is XML for a client that names it; `text/*` asks for text, which a structured answer
// is not (406), and which a simple one is as text/plain.
const NAMES_TEXT_XML = /(^|,)\s*text\/xml\s*(;|,|$)/i;
const withoutTextXml = (offers: string[]) => offers.filter((o) => o !== 'text/xml');

const BY_MEDIA_TYPE: Record<string, Format> = {
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/json': 'json',
  'text/plain': 'text',
};

// Clients send few distinct Accept headers: remember the answers (a map starts afresh when full),
// one map per kind of response, keyed by the header itself (no key to build per request); null:
// nothing acceptable.
const MEMO_MAX = 256;
const memo = {
  simple: new Map<string, string | null>(),
  structured: new Map<string, string | null>(),
};

/** The format to answer in, or undefined when nothing acceptable is on offer (406). */
export function negotiate(accept: string | undefined, simple: boolean): Format | undefined {
  const chosen = negotiateMediaType(accept, simple);
  return chosen === undefined ? undefined : BY_MEDIA_TYPE[chosen];
}

/**
 * The media type to answer with, or undefined (406): `text/xml` for a client that prefers it (its
 * answer is XML, labelled as it asked), else the format's own type.
 */
export function negotiateMediaType(
  accept: string | undefined,
  simple: boolean,
): string | undefined {
  if (accept === undefined) return MEDIA_TYPE.xml;
  const answers = simple ? memo.simple : memo.structured;
  const known = answers.get(accept);
  if (known !== undefined) return known ?? undefined;
  let chosen: string | undefined = MEDIA_TYPE.xml;
  // An empty list (RFC 9110 §5.6.1: `,` or `, ,` has no member) is an empty Accept.
  if (!/^[\s,]*$/.test(accept)) {
    const offers = simple ? OFFERS_SIMPLE : OFFERS_STRUCTURED;
    chosen = new Negotiator({ headers: { accept: withoutParameters(accept) } }).mediaType(
      NAMES_TEXT_XML.test(accept) ? offers : withoutTextXml(offers),
    );
  }
  if (answers.size >= MEMO_MAX) answers.clear();
  answers.set(accept, chosen ?? null);
  return chosen;
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
