// The Idempotency-Key header on the operations whose OpenAPI declares it (T1 and the workflow
// runs; `transportHeaders` of the route table): hooks around those routes, the rules in
// domain/idempotency.ts, the whole in docs/events.md.
//
// Added to those routes only, as they are registered (onRoute):
//   preHandler (authenticated, body read): claim the key, or answer at once with the first
//              answer (byte for byte), 422 (the key was used with another request) or 409 (the
//              first request is still being served, after waiting for it a while);
//   onSend:    store the answer of the request that claimed the key; an answer of 500 or more
//              gives the key up instead, so that a retry does the work.
import { createHash } from 'node:crypto';
import {
  HttpError,
  negotiate,
  operations,
  type OperationSpec,
} from '@pal-workflow/server-skeleton';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onSendHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import type { DomainContext } from '../domain/context.js';
import {
  claimIdempotencyKeyFor,
  releaseIdempotencyKeyFor,
  storeIdempotentAnswerFor,
} from '../domain/idempotency.js';
import { callerOf } from './request-scope.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The header's maxLength in the OpenAPI. */
export const MAX_KEY_LENGTH = 255;

/** Printable ASCII without space, `"` and `\`: a bare token, also valid inside an sf-string. */
const KEY_CHARACTERS = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * The key a header value names: 1 to 255 characters of KEY_CHARACTERS, bare or as a Structured
 * Fields string (the draft's form, `"…"`, whose quotes are not part of the key). 400 otherwise.
 */
export function parseIdempotencyKey(value: string | string[]): string {
  const refuse = () =>
    new HttpError(
      400,
      'INVALID_ARGUMENT',
      `${IDEMPOTENCY_KEY_HEADER}: 1 to ${MAX_KEY_LENGTH} printable ASCII characters without spaces, quotes or backslashes, bare or in double quotes, in one header`,
    );
  if (typeof value !== 'string' || value.length > MAX_KEY_LENGTH) throw refuse();
  const quoted = value.length >= 2 && value.startsWith('"') && value.endsWith('"');
  const key = quoted ? value.slice(1, -1) : value;
  if (!KEY_CHARACTERS.test(key)) throw refuse();
  return key;
}

/**
 * What makes two requests with one key the same request: method, path and query, the body's
 * media type (without parameters: a multipart boundary differs on every retry) and the body as
 * read (a form's fields, an XML or JSON text), and the format that Accept chooses.
 */
export function requestFingerprint(request: FastifyRequest, spec: OperationSpec): string {
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const format = formatOf(request, spec);
  const parts = [request.method, request.url, mediaType, format, request.body ?? null];
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

function formatOf(request: FastifyRequest, spec: OperationSpec) {
  return negotiate(request.headers.accept, spec.response.kind === 'simple');
}

interface OwnedKey {
  clientId: string;
  key: string;
  owner: string;
}

/**
 * Adds the hooks to the routes of the operations that declare the header, as they are registered
 * (so every other route pays nothing). Call before the operations' routes are registered.
 */
export function registerIdempotency(app: FastifyInstance, domain: DomainContext): void {
  const { serviceRoot, userRoot } = domain.config;
  const routes = new Map<string, OperationSpec>();
  for (const spec of Object.values(operations) as OperationSpec[])
    if (spec.transportHeaders?.some((h) => h.name === IDEMPOTENCY_KEY_HEADER))
      routes.set(
        `${spec.method} /${spec.root === 'service' ? serviceRoot : userRoot}${spec.path}`,
        spec,
      );
  const owned = new WeakMap<FastifyRequest, OwnedKey>();

  // Callback style around the async work, so that a request without the header (most of them)
  // costs these routes no promise of their own.
  const claim =
    (spec: OperationSpec): preHandlerHookHandler =>
    (request, reply, done) => {
      const raw = request.headers['idempotency-key'];
      const caller = callerOf(request);
      if (raw === undefined || !caller) return done();
      // No format the client accepts: the route answers 406 and does nothing, so the key is
      // neither used up nor stored (a retry that accepts a format does the work).
      if (formatOf(request, spec) === undefined) return done();
      // The route goes on only for the request that claimed the key; a replay has been answered.
      claimKey(request, reply, spec, raw, caller.clientId).then((goOn) => {
        if (goOn) done();
      }, done);
    };

  const claimKey = async (
    request: FastifyRequest,
    reply: FastifyReply,
    spec: OperationSpec,
    raw: string | string[],
    clientId: string,
  ): Promise<boolean> => {
    const key = parseIdempotencyKey(raw);
    const claimed = await claimIdempotencyKeyFor(
      domain,
      clientId,
      key,
      requestFingerprint(request, spec),
    );
    switch (claimed.kind) {
      case 'claimed':
        owned.set(request, { clientId, key, owner: claimed.owner });
        return true;
      case 'answered': {
        const { status, contentType, body } = claimed.answer;
        if (contentType !== null) reply.header('Content-Type', contentType);
        reply.code(status).header('Idempotent-Replayed', 'true').send(body);
        return false;
      }
      case 'mismatch':
        throw new HttpError(
          422,
          'IDEMPOTENCY_KEY_REUSED',
          `${IDEMPOTENCY_KEY_HEADER}: this key was used within the last 24 hours with another request; use a new key for a new request`,
        );
      case 'busy':
        throw new HttpError(
          409,
          'CONFLICT',
          `${IDEMPOTENCY_KEY_HEADER}: the first request with this key is still being served; repeat this one later`,
          { 'Retry-After': String(claimed.retryAfterSeconds) },
        );
    }
  };

  const answer: onSendHookHandler = (request, reply, payload, done) => {
    const claimed = owned.get(request);
    if (!claimed) return done(null, payload);
    owned.delete(request);
    // storeAnswer logs its own failures; the answer goes out whatever happens to it. A throw of
    // the send itself (a header Node refuses) becomes an error answer, as an async hook's would.
    const send = () => {
      try {
        done(null, payload);
      } catch (error) {
        done(error as Error);
      }
    };
    void storeAnswer(request, reply, claimed, payload).then(send, send);
  };

  /**
   * Keeps the answer of the request that claimed a key. A server fault is not an answer to keep
   * (the work may not have happened), nor one that asks to come back later (Retry-After: a run
   * in progress, an enterprise's run cap), which did no work and would be wrong for a day; nor a
   * stream, which the routes never send. A
   * failure to store is logged: the answer still goes out, and the key answers 409 until its
   * lease ends.
   */
  const storeAnswer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    { clientId, key, owner }: OwnedKey,
    payload: unknown,
  ): Promise<void> => {
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload : undefined;
    try {
      if (reply.statusCode >= 500 || reply.hasHeader('retry-after') || body === undefined)
        await releaseIdempotencyKeyFor(domain, clientId, key, owner);
      else {
        const contentType = reply.getHeader('content-type');
        await storeIdempotentAnswerFor(domain, clientId, key, owner, {
          status: reply.statusCode,
          contentType: contentType === undefined ? null : String(contentType),
          body: body.toString(),
        });
      }
    } catch (error) {
      request.log.error({ err: error }, 'the answer to an idempotency key could not be stored');
    }
  };

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const spec = methods.map((m) => routes.get(`${m} ${route.url}`)).find(Boolean);
    if (!spec) return;
    route.preHandler = [...asArray(route.preHandler), claim(spec)];
    route.onSend = [...asArray(route.onSend), answer];
  });
}

function asArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
