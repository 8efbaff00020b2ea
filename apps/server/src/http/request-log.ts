// What request logs say about a request: its id, and its URL without the secrets some URLs carry.
// Entry tokens (`/{service_root}/enter/{token}`), invitation tokens
// (`/{service_root}/invitations/{token}`) and a mailed link's pair (`encryptedToken`,
// `encryptedAction`: they enter a transaction for 7 days) are each as good as a password while
// they live; a log line must not hand them to whoever reads the logs.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';

export const REDACTED = '[redacted]';

/** Query parameters whose values are secrets (the mailed link's pair, on its page and on T3). */
const SECRET_QUERY_PARAMETERS = ['encryptedToken', 'encryptedAction'];

/** A request id a client may choose: short, and nothing a log reader could mistake for more. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The id of a request: the client's `X-Request-Id` when it is safe to log and echo as it is
 * (SAFE_REQUEST_ID), else a fresh UUID. Fastify's genReqId.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** A URL (path and query, as a request line has it) with its secrets replaced by REDACTED. */
export function redactUrl(url: string, serviceRoot: string): string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const query = at === -1 ? '' : url.slice(at + 1);
  const redactedPath = path.replace(
    new RegExp(`^(/${escapeRegExp(serviceRoot)}/(?:enter|invitations)/)[^/]+`),
    `$1${REDACTED}`,
  );
  if (at === -1) return redactedPath;
  const redactedQuery = query
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return SECRET_QUERY_PARAMETERS.includes(decodeName(name)) ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
  return `${redactedPath}?${redactedQuery}`;
}

/**
 * The `req` serializer of the request logs: Fastify's own fields, with the URL redacted.
 */
export function requestSerializer(serviceRoot: string) {
  return (request: FastifyRequest) => ({
    method: request.method,
    url: redactUrl(request.url, serviceRoot),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  });
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
