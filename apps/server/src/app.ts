// buildApp(): the Fastify instance with its infrastructure (logging with request ids, errors as
// errorResults, /healthz, /openapi.json, /docs, browser pages) and the generated routes wired to
// the handlers. It does not listen: main.ts does, and tests drive it over a real port.
import proxyAddr from '@fastify/proxy-addr';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import {
  maxPathParamLength,
  operationOf,
  openApiDocument,
  registerRoutes,
  describeError,
  sendError,
  HttpError,
} from '@pal-workflow/server-skeleton';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { WorkflowContext } from './workflows/context.js';
import { handlers } from './handlers/index.js';
import { RouteMethods } from './http/allowed-methods.js';
import { headerLines } from './http/header-lines.js';
import { authenticator } from './http/authenticate.js';
import { clientErrorHandler, expectationFailed } from './http/client-errors.js';
import { serveConnectRequests } from './http/connect-method.js';
import { ClientCredentials } from './http/credentials.js';
import { registerIdempotency } from './http/idempotency.js';
import { sendPage, wantsPage } from './http/page.js';
import { escapeHtml } from './html.js';
import { registerPages } from './http/pages.js';
import { addressKey, RateLimits } from './http/rate-limits.js';
import { badlyEncodedQueryPiece } from './http/query-encoding.js';
import { requestIdOf, requestSerializer } from './http/request-log.js';
import { registerRequestScope, rememberingCaller } from './http/request-scope.js';
import { pingDatabase } from './storage/database.js';
import { openRateCountPool } from './storage/rate-counts.js';

/** Longest path parameter the router passes on: room for any id (its maxLength) percent-encoded. */
const MAX_PATH_PARAM_LENGTH = 3 * maxPathParamLength;

export interface BuildAppOptions {
  /** Log requests (pino, JSON lines). Tests usually turn it off. */
  logger?: boolean;
  /** Where the log lines go (default: stdout); tests read them here. */
  logStream?: DestinationStream;
}

export async function buildApp(
  domain: WorkflowContext,
  options: BuildAppOptions = {},
): Promise<FastifyInstance> {
  const { config } = domain;
  // Fastify builds the request of a router error without TRUST_PROXY (its `ip` is the proxy's),
  // so its address is read here as every other request's is.
  const trusted = config.trustProxy ? proxyAddr.compile(config.trustProxy) : undefined;
  const routerErrorAddress = (request: FastifyRequest) =>
    trusted ? proxyAddr(request.raw, trusted) : request.ip;
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            // URLs without the tokens and mailed-link pairs some carry (http/request-log.ts).
            serializers: { req: requestSerializer(config.serviceRoot) },
            ...(options.logStream ? { stream: options.logStream } : {}),
          },
    bodyLimit: config.bodyLimitBytes,
    // Fastify's default is no limit at all: a body sent a byte a minute, or never finished, held
    // its connection and what had arrived (found by a helper probing the pages). Given to Node's
    // createServer too (below): set on the server afterwards, as Fastify does, Node never applies it.
    requestTimeout: config.requestTimeoutMs,
    http: {
      // Node would answer an HTTP/1.1 request without Host with a bare 400 of its own; the hook
      // below answers it with an errorResult, as every refusal is.
      requireHostHeader: false,
      requestTimeout: config.requestTimeoutMs,
      // Node checks requestTimeout every connectionsCheckingInterval (30 s by default): a
      // quarter of the timeout keeps it close to what it says.
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(config.requestTimeoutMs / 4)),
    },
    // Behind the proxies named by TRUST_PROXY, a request's address (rate limits, the sign-in
    // throttle) and protocol are what they forwarded; anyone else's X-Forwarded-For is ignored.
    trustProxy: config.trustProxy ?? false,
    // A client's X-Request-Id only when it is safe to log as it is; otherwise a fresh one.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Ids up to their maxLength (pal ids up to 128 characters) must reach the operations, which
    // judge them; find-my-way's default of 100 answered a longer one with a bare 414.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // Errors the router raises before any route (a bad URL encoding, an over-long path
    // parameter) are errorResults too, not Fastify's own JSON.
    // They skip the hooks, so the request id is set, the address counted and its standing written
    // here: they are answers like any other (and, over the limit, the 429 comes first).
    frameworkErrors: (error, request, reply) => {
      reply.header('X-Request-Id', request.id);
      limits.countThen(request, 'address', addressKey(routerErrorAddress(request)), (limited) => {
        limits.writeHeaders(request, reply);
        answerError(config.serviceRoot, request, reply, limited ?? routerError(error), 'router');
      });
    },
    // And those Node's HTTP parser refuses before any route (http/client-errors.ts).
    clientErrorHandler: clientErrorHandler(config),
  });

  // No route of the root takes a body (/healthz, /openapi.json, /docs, unknown paths): one sent
  // there is neither read into memory nor parsed (it was: 25 MiB of JSON on any unknown path).
  // The operations and the pages have parsers of their own, for what each takes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  // Every route, as it is registered, for the 405 of a path that takes other methods.
  const routeMethods = new RouteMethods();
  app.addHook('onRoute', (route) => routeMethods.add(route.method, route.url));

  // And an Expect the server does not meet (Node's own 417 had no body).
  app.server.on('checkExpectation', expectationFailed);
  // And CONNECT, whose socket Node destroyed unanswered (http/connect-method.ts).
  serveConnectRequests(app.server);
  // Expect: 100-continue is met once the body may come: after the request's credentials and
  // route are judged, and only when its length fits (preParsing, below). Node's own answer came at
  // once, so a client with wrong credentials or 30 MiB for a 25 MiB limit sent it all for a 401 or
  // a 413. A final answer instead of the 100 is what RFC 9110 §10.1.1 allows.
  app.server.on('checkContinue', (request, response) =>
    app.server.emit('request', request, response),
  );
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (continueMayCome(request, config.formBodyLimitBytes)) reply.raw.writeContinue();
    done(null, payload);
  });
  app.setErrorHandler((error, request, reply) =>
    answerError(config.serviceRoot, request, reply, error),
  );
  const credentials = new ClientCredentials(domain);
  const limits = new RateLimits(config.rateLimits, openRateCountPool(config.database));
  RateLimits.decorate(app);
  // Every answer names its request, and every request is counted. Operations are counted by
  // authenticate.ts, which knows their client; the rest (pages, /openapi.json, /docs, /healthz,
  // unknown paths) have no credentials and count by their address. (One hook, not two: each
  // costs every request a step of Fastify's.)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    // Refused before its credentials are read, and at once: counted by its address in this node's
    // memory (its standing told as on every answer), as /healthz is below.
    const refuseAtOnce = (message: string) => {
      limits.countHere(request, 'address', addressKey(request.ip));
      done(new HttpError(400, 'INVALID_ARGUMENT', message));
    };
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1')
      return refuseAtOnce('an HTTP/1.1 request needs a Host header');
    // RFC 9112 §3.2: more than one Host line, or one that is no host[:port], is a 400 (Node keeps
    // the first line, and takes any text).
    if (request.headers.host !== undefined && !oneValidHost(request))
      return refuseAtOnce('the Host header must be one line of host[:port]');
    const badQuery = badlyEncodedQueryPiece(request.url);
    if (badQuery !== undefined)
      return refuseAtOnce(
        `the query parameter "${badQuery.slice(0, 40)}" is not percent-encoded UTF-8`,
      );
    if (operationOf(request)) return done();
    const address = addressKey(request.ip);
    // Counted, and its standing told as on every answer, but never refused, and in this node's
    // memory only: a load balancer must always get its answer, and never wait for PostgreSQL's
    // shared count.
    if (request.routeOptions.url === '/healthz') {
      limits.countHere(request, 'address', address);
      return done();
    }
    limits.countThen(request, 'address', address, done);
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    limits.writeHeaders(request, reply);
    // An answer given while the body is still arriving (a refusal made before the body is read:
    // no credentials, no session, a body over its limit) lets the connection go with it. Kept
    // open, Node would read on a body nobody uses until REQUEST_TIMEOUT_MS, then write a stray
    // 408 after the answer. Only for a request that has a body: Node marks a request complete
    // after the step that handed it over, so an answer given in that step (a 404, a page from
    // memory) finds even a GET not complete yet.
    if (!request.raw.complete && hasBody(request)) reply.header('Connection', 'close');
    done(null, payload);
  });
  app.addHook('onClose', async () => {
    credentials.close();
    await domain.engine.close();
    await limits.close();
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    // A browser that follows a cut or mistyped page link gets a page; an API client, an errorResult.
    if (wantsPageOf(request, config.serviceRoot))
      return sendPage(
        reply,
        404,
        'No such page',
        '<h1>No such page</h1><p>Nothing is at this address. If you followed a link from a mail or a message, open it again from there, whole: a link cut short leads here.</p>',
      );
    const allowed = routeMethods.allowed(path);
    // A tunnel to elsewhere (`CONNECT host:port`) names no resource of the service: 501.
    if (request.method === 'CONNECT' && allowed.length === 0)
      return sendError(
        request,
        reply,
        new HttpError(
          501,
          'NOT_IMPLEMENTED',
          `the service is no proxy: CONNECT ${path} opens no tunnel; its operations take GET, HEAD and POST`,
        ),
      );
    if (allowed.length > 0)
      return sendError(
        request,
        reply,
        new HttpError(
          405,
          'METHOD_NOT_ALLOWED',
          `${request.method} is not an operation of ${path}: it takes ${allowed.join(', ')}`,
          { Allow: allowed.join(', ') },
        ),
      );
    return sendError(
      request,
      reply,
      new HttpError(404, 'NOT_FOUND', `no operation at ${request.method} ${path}`),
    );
  });

  app.get('/healthz', async (_request, reply) => {
    try {
      await pingDatabase(domain.db);
      return { status: 'ok' };
    } catch (error) {
      app.log.error({ err: error }, 'health check failed');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  const document = servedDocument(domain);
  app.get('/openapi.json', async () => document);
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });

  registerRequestScope(app);
  registerIdempotency(app, domain);
  await registerPages(app, domain);

  await registerRoutes(app, {
    handlers,
    authenticate: rememberingCaller(authenticator(domain, credentials, limits)),
    serviceRoot: config.serviceRoot,
    userRoot: config.userRoot,
    bodyLimit: config.bodyLimitBytes,
    formBodyLimit: config.formBodyLimitBytes,
  });
  return app;
}

/** What the router's own errors mean to the caller: a bad parameter value (400). */
function routerError(error: { code?: string }): unknown {
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new HttpError(
        400,
        'INVALID_ARGUMENT',
        // The router's bound counts percent-encoded characters; the ids' own is what to say.
        `a path parameter is longer than any id (${maxPathParamLength} characters)`,
      );
    case 'FST_ERR_BAD_URL':
      return new HttpError(400, 'INVALID_ARGUMENT', 'the path is not valid percent-encoded UTF-8');
    default:
      return error;
  }
}

/** The bundled OpenAPI document, with this server's address and configured roots. */
function servedDocument(domain: WorkflowContext): Record<string, unknown> {
  const { serviceRoot, userRoot, publicUrl } = domain.config;
  const doc = structuredClone(openApiDocument) as unknown as Record<string, unknown> & {
    paths: Record<string, unknown>;
  };
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    const rewritten = path
      .replace(/^\/services\//, `/${serviceRoot}/`)
      .replace(/^\/user\//, `/${userRoot}/`);
    paths[rewritten] = item;
  }
  return { ...doc, servers: [{ url: publicUrl }], paths };
}

/**
 * An error's answer: an errorResult, or for a browser asking for a page (a link cut or garbled in
 * a mail, a person over the address's limit) a page that says the same in words.
 */
function answerError(
  serviceRoot: string,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  /** The router refused the address itself (a garbled or far too long link). */
  from?: 'router',
): void {
  if (!wantsPageOf(request, serviceRoot)) return void sendError(request, reply, error);
  const { status, messages, headers } = describeError(error);
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  const wait = headers['Retry-After'];
  const [title, text] =
    status === 429
      ? [
          'Too many requests',
          `This address has sent too many requests without signing in. Try again in ${wait ? `${wait} seconds` : 'a moment'}.`,
        ]
      : status >= 500
        ? ['Something went wrong', 'The service could not answer. Try again in a moment.']
        : from === 'router' && status === 400
          ? [
              'This address is not valid',
              'Nothing can be found at an address written this way. If you followed a link from a mail or a message, open it again from there, whole: a link cut short or changed leads here.',
            ]
          : ['This request was refused', `${messages[0] ?? 'It cannot be answered'}.`];
  if (status >= 500) request.log.error({ err: error }, 'a page request failed');
  sendPage(reply, status, title, `<h1>${title}</h1><p>${escapeHtml(text)}</p>`);
}

/** The request announces a body (HTTP/1.1's two ways of framing one). */
function hasBody(request: FastifyRequest): boolean {
  const { 'content-length': length, 'transfer-encoding': encoding } = request.headers;
  return encoding !== undefined || (length !== undefined && length !== '0');
}

/**
 * Whether a request that expects `100-continue` may send its body now: an HTTP/1.1 request (an
 * HTTP/1.0 client's expectation is ignored, RFC 9110 §10.1.1) to a route that exists, without a
 * content coding the operations refuse, whose length fits what its route reads (an operation's
 * form its form limit, anything else the route's body limit). Otherwise the final answer comes
 * instead, and the body is not sent for nothing.
 */
function continueMayCome(request: FastifyRequest, formBodyLimit: number): boolean {
  if (!/^100-continue$/i.test(request.headers.expect ?? '')) return false;
  if (request.raw.httpVersion !== '1.1' || request.is404) return false;
  const coding = request.headers['content-encoding'];
  if (coding !== undefined && !/^\s*identity\s*$/i.test(coding)) return false;
  const form = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(
    request.headers['content-type'] ?? '',
  );
  const limit = form && operationOf(request) ? formBodyLimit : request.routeOptions.bodyLimit;
  return !(Number(request.headers['content-length'] ?? 0) > limit);
}

function wantsPageOf(request: FastifyRequest, serviceRoot: string): boolean {
  return wantsPage(request.url, request.headers.accept, serviceRoot);
}

/** An authority of an http URI without user info: a reg-name, IPv4 or [IPv6], and a port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::[0-9]{0,5})?$/;

function oneValidHost(request: FastifyRequest): boolean {
  return HOST.test(request.headers.host!) && headerLines(request, 'host', 2) === 1;
}
