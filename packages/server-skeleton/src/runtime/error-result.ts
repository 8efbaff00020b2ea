/**
 * Every error leaves as an errorResult (docs/decisions.md, "Errors"): a Result with success=false
 * and messages [{message, type}], `type` a stable code, in the negotiated format.
 */
import { DecodeError, encodeJson, encodeXml } from '@pal-workflow/validators';
import type { Result } from '@pal-workflow/types';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CODE_BY_STATUS } from './http-error.js';
import { MEDIA_TYPE, negotiate, negotiateMediaType } from './negotiate.js';

export interface ErrorDescription {
  status: number;
  code: string;
  messages: string[];
  headers: Record<string, string>;
}

const UNREAD_MEDIA_TYPE =
  'a body needs a Content-Type this service reads: application/xml, text/xml, application/json, application/x-www-form-urlencoded or multipart/form-data';

// Fastify's own error codes that mean a client mistake.
const FASTIFY_STATUS: Record<string, number> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 415,
  FST_ERR_CTP_BODY_TOO_LARGE: 413,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 400,
  FST_ERR_CTP_EMPTY_JSON_BODY: 400,
};

export function describeError(error: unknown): ErrorDescription {
  if (error instanceof DecodeError)
    return {
      status: 400,
      code: 'INVALID_ARGUMENT',
      messages: error.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)),
      headers: {},
    };
  // Anything may be thrown, `undefined` and `null` included.
  const e = (typeof error === 'object' && error !== null ? error : {}) as {
    statusCode?: unknown;
    status?: unknown;
    code?: unknown;
    message?: unknown;
    headers?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const status =
    (code && FASTIFY_STATUS[code]) ||
    (typeof e.statusCode === 'number'
      ? e.statusCode
      : typeof e.status === 'number'
        ? e.status
        : 500);
  if (status < 400 || status >= 500) {
    // A server-side status passes through only with a stable code of its own (501 not built yet,
    // 502/503 an upstream such as the mail server); anything else is an unexpected fault.
    if (
      (status === 501 || status === 502 || status === 503) &&
      code &&
      !code.startsWith('FST_') &&
      /^[A-Z_]+$/.test(code)
    )
      return { status, code, messages: [String(e.message)], headers: {} };
    return {
      status: 500,
      code: 'INTERNAL',
      messages: ['internal error: the server logged it with the request id'],
      headers: {},
    };
  }
  const stable =
    code && !code.startsWith('FST_') ? code : (CODE_BY_STATUS[status] ?? 'INVALID_ARGUMENT');
  // Fastify's own words are "Unsupported Media Type": say what would be read.
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return { status, code: stable, messages: [UNREAD_MEDIA_TYPE], headers: {} };
  const headers =
    e.headers && typeof e.headers === 'object' ? (e.headers as Record<string, string>) : {};
  return {
    status,
    code: stable,
    messages: [typeof e.message === 'string' ? e.message : stable],
    headers,
  };
}

export function errorResult(description: ErrorDescription): Result {
  return {
    success: false,
    messages: description.messages.map((message) => ({ message, type: description.code })),
  };
}

/** Writes an error in the format the request accepts (XML when it accepts neither). */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
): FastifyReply {
  const d = describeError(error);
  if (d.status >= 500) request.log.error({ err: error }, 'request failed');
  const mediaType = negotiateMediaType(request.headers.accept, false) ?? MEDIA_TYPE.xml;
  const format = negotiate(request.headers.accept, false) ?? 'xml';
  const body = errorResult(d);
  for (const [name, value] of Object.entries(d.headers)) reply.header(name, value);
  if (d.status === 401 && !reply.hasHeader('www-authenticate'))
    reply.header('WWW-Authenticate', 'Basic realm="pal"');
  return reply
    .code(d.status)
    .type(`${mediaType}; charset=utf-8`)
    .send(format === 'json' ? encodeJson('errorResult', body) : encodeXml('errorResult', body));
}
