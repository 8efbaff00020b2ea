/**
 * XML and JSON bodies are UTF-8 (docs/decisions.md, "Wire format"): a Content-Type naming another
 * charset is a 415, bytes that are not UTF-8 and an XML declaration naming another encoding are a
 * 400. Nothing is read "as well as it goes": a body is either the text that was sent, or refused.
 */
import type { FastifyRequest } from 'fastify';
import { badRequest, HttpError } from './http-error.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/gi;
const XML_ENCODING = /^<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']/;

/**
 * A 415 when the Content-Type names a charset other than UTF-8, in any of its charset parameters:
 * a form or body declared Latin-1 was read as UTF-8, and with two the first one was believed.
 */
export function requireUtf8Charset(request: FastifyRequest): void {
  const type = String(request.headers['content-type'] ?? '');
  for (const [, charset = ''] of type.matchAll(CHARSET))
    if (!/^utf-?8$/i.test(charset))
      throw new HttpError(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        `Content-Type names charset "${charset}": bodies and forms are read as UTF-8 only`,
      );
}

export function utf8Body(request: FastifyRequest, body: Buffer, kind: 'xml' | 'json'): string {
  requireUtf8Charset(request);
  const text = utf8Text(body);
  if (kind === 'xml') {
    const encoding = XML_ENCODING.exec(text)?.[1];
    if (encoding !== undefined && !/^utf-?8$/i.test(encoding))
      throw badRequest(
        `the XML declaration names encoding "${encoding}": bodies are read as UTF-8 only`,
      );
  }
  return text;
}

/** The body's text; a 400 when its bytes are not UTF-8 (no U+FFFD put in their place). */
export function utf8Text(body: Buffer): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw badRequest('the body is not valid UTF-8');
  }
}
