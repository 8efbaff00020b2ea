// BASIC authentication for every operation, through the skeleton's authentication slot (an
// onRequest hook, so a refused request never has its body read). A client's wrong secrets are
// throttled per (username, address), counted in the database across nodes: a throttled pair's
// wrong attempts get 429 with Retry-After, while the right secret is still accepted. A request
// whose header was verified lately touches no table (unless its pair failed here since).
// Every request is then counted by the rate limits (http/rate-limits.ts): against its client when
// its credentials are valid, else against its address, before anything else is done for it.
import { HttpError } from '@pal-workflow/server-skeleton';
import type { FastifyRequest } from 'fastify';
import { recordWrongSecret } from '../domain/audit-attempts.js';
import type { WorkflowContext } from '../workflows/context.js';
import type { AppContext } from './app-context.js';
import type { ClientCredentials } from './credentials.js';
import { headerLines } from './header-lines.js';
import { addressKey, type RateLimits } from './rate-limits.js';

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="pal"' };

/**
 * The credentials of a Basic header (RFC 7617): base64 of RFC 4648's alphabet, its padding
 * optional, and nothing Node's lenient decoder would skip (another alphabet, bytes after the
 * padding), so that one pair of credentials is sent one way.
 */
export function parseBasic(
  header: string | undefined,
): { username: string; password: string } | undefined {
  if (!header) return undefined;
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+)(={0,2})[ \t]*$/i.exec(header);
  if (!match) return undefined;
  const bytes = Buffer.from(match[1]!, 'base64');
  if (bytes.toString('base64').replace(/=+$/, '') !== match[1]) return undefined;
  const decoded = bytes.toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function authenticator(
  domain: WorkflowContext,
  credentials: ClientCredentials,
  limits: RateLimits,
) {
  return (request: FastifyRequest): AppContext | Promise<AppContext> => {
    const header = request.headers.authorization;
    // Node keeps the first of several lines, while a proxy in front may have judged the last: one
    // identity per request, or none.
    if (header !== undefined && headerLines(request, 'authorization', 2) > 1)
      return refuseRepeated(limits, request);
    // The fast path: a header verified lately, i.e. the right secret. It is accepted even when
    // its (username, address) is throttled: the throttle slows guessing, and must not let anyone
    // behind the same address lock the client out. A success clears the pair's failures.
    const known = header === undefined ? undefined : credentials.verifiedHeader(header);
    if (known) {
      const context: AppContext = {
        domain,
        enterpriseId: known.client.enterpriseId,
        clientId: known.client.clientId,
        username: known.username,
        requestId: request.id,
      };
      const cleared = credentials.throttle.succeeded(known.username, request.ip);
      const counted = limits.count(request, 'client', known.client.clientId);
      // Counted in memory and nothing to clear: the answer is at once, without a promise.
      if (cleared === undefined && counted === undefined) return context;
      return Promise.all([cleared, counted]).then(() => context);
    }

    return verify(domain, credentials, limits, request, header);
  };
}

async function refuseRepeated(limits: RateLimits, request: FastifyRequest): Promise<never> {
  await limits.count(request, 'address', addressKey(request.ip));
  throw new HttpError(
    400,
    'INVALID_ARGUMENT',
    'Authorization: given more than once; send one Basic header',
  );
}

async function verify(
  domain: WorkflowContext,
  credentials: ClientCredentials,
  limits: RateLimits,
  request: FastifyRequest,
  header: string | undefined,
): Promise<AppContext> {
  const given = parseBasic(header);
  if (!given) {
    await limits.count(request, 'address', addressKey(request.ip));
    const reason = request.headers.authorization
      ? 'malformed Authorization header: expected Basic credentials'
      : 'credentials required';
    throw new HttpError(401, 'UNAUTHORIZED', reason, CHALLENGE);
  }
  // A throttled pair is still checked: client secrets have 256 random bits, so accepting the right
  // one gives a guesser nothing, while refusing it would lock the client out. Wrong ones get 429.
  const snapshot = credentials.snapshot();
  const { client, known } = await credentials.check(given.username, given.password);
  if (!client) {
    // Past its address's limit, a wrong guess is refused before it is counted anywhere else.
    await limits.count(request, 'address', addressKey(request.ip));
    // A client's wrong secrets are counted in the database, shared by the nodes. A username that
    // is nobody's is counted the same way in this node's memory (no durable write per guess), so
    // that both are answered 429 after as many failures: the 429 tells nobody which exist.
    const wait = known
      ? await credentials.throttle.recordFailure(given.username, request.ip)
      : credentials.throttle.recordUnknownFailure(given.username, request.ip);
    if (wait > 0) {
      // Every 429 says r=0 and when to come back (the OpenAPI's TooManyRequests), under the
      // policy that refused it: the address's own count may allow more, but not this username's
      // guesses from it for `wait` seconds.
      request.rateStanding = { policy: 'sign-in', remaining: 0, resetSeconds: wait };
      throw new HttpError(429, 'RATE_LIMITED', `too many failed attempts: try again in ${wait} s`, {
        'Retry-After': String(wait),
      });
    }
    // The audit record of a client's wrong secret (bounded: domain/audit-attempts.ts). Not awaited:
    // recording adds nothing to the 401's time.
    if (known)
      void recordWrongSecret(domain, given.username, { ip: request.ip, requestId: request.id });
    throw new HttpError(401, 'UNAUTHORIZED', 'wrong credentials', CHALLENGE);
  }
  await credentials.throttle.succeeded(given.username, request.ip);
  credentials.rememberHeader(header!, given.username, client, snapshot);
  await limits.count(request, 'client', client.clientId);
  return {
    domain,
    enterpriseId: client.enterpriseId,
    clientId: client.clientId,
    username: given.username,
    requestId: request.id,
  };
}
