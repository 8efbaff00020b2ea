/**
 * Form bodies (`application/x-www-form-urlencoded` and `multipart/form-data`) read into raw
 * values, within caps: a form holds at most `maxFields` fields (and `maxFiles` file parts). A
 * name given several times collects its values in one array, appended in place: the time to read
 * a form is linear in its size, whatever its names.
 */
import { parse as parseQueryString } from 'fast-querystring';
import type { RawValues } from './coerce.js';
import { badRequest, HttpError } from './http-error.js';
import { utf8Text } from './utf8-body.js';

export interface FormLimits {
  /** Fields a form may hold (a repeated name counts once per value). */
  readonly maxFields: number;
  /** File parts a multipart form may hold. */
  readonly maxFiles: number;
}

export const DEFAULT_FORM_LIMITS: FormLimits = { maxFields: 100, maxFiles: 10 };

/** The largest form body accepted by default (64 KiB): forms carry ids, names and addresses. */
export const DEFAULT_FORM_BODY_LIMIT = 64 * 1024;

function tooManyFields(limits: FormLimits): HttpError {
  return new HttpError(
    413,
    'PAYLOAD_TOO_LARGE',
    `a form holds at most ${limits.maxFields} fields and ${limits.maxFiles} files`,
  );
}

/**
 * The fields of an urlencoded body. Counted before they are decoded (one pass over the text), so
 * a body of many fields is refused (413) without building any of them.
 */
export function parseUrlEncoded(
  /** The body's bytes (which must be UTF-8), or its text. */
  body: Buffer | string,
  limits: FormLimits = DEFAULT_FORM_LIMITS,
): RawValues {
  const text = typeof body === 'string' ? body : utf8Text(body);
  let fields = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    // An empty piece ("a=1&&b=2", a trailing "&") is no field, as the parser below reads it.
    if (end > start && ++fields > limits.maxFields) throw tooManyFields(limits);
    // The parser keeps an escape it cannot decode as it is ("%ED%A0%80" stayed those nine
    // characters): the value would reach the operation changed, so it is refused, as bytes that
    // are not UTF-8 are in every body.
    const piece = text.slice(start, end);
    if (piece.includes('%')) {
      try {
        decodeURIComponent(piece);
      } catch {
        throw badRequest(`the form field "${piece.slice(0, 40)}" is not percent-encoded UTF-8`);
      }
    }
    start = end + 1;
  }
  // fast-querystring (Fastify's own): no prototype, so "__proto__" is a field like any other.
  return parseQueryString(text) as RawValues;
}

/** The fields of a multipart/form-data body; a file part counts as a field with its text. */
export async function parseMultipart(
  contentType: string,
  body: Buffer,
  limits: FormLimits = DEFAULT_FORM_LIMITS,
): Promise<RawValues> {
  // Every part of an operation's form is text, and text is UTF-8: the parser below would put
  // U+FFFD in place of bytes that are not, and the value would be taken changed.
  utf8Text(body);
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw badRequest('malformed multipart/form-data body');
  }
  const out: RawValues = Object.create(null) as RawValues;
  let fields = 0;
  let files = 0;
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') fields += 1;
    else files += 1;
    if (fields > limits.maxFields || files > limits.maxFiles) throw tooManyFields(limits);
    const text = typeof value === 'string' ? value : await value.text();
    const previous = out[name];
    if (previous === undefined) out[name] = text;
    else if (Array.isArray(previous)) previous.push(text);
    else out[name] = [previous, text];
  }
  return out;
}
