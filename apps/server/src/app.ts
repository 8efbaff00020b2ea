// buildApp(): the Fastify instance with its infrastructure (logging with request ids, errors as
// errorResults, /healthz, /openapi.json, /docs, browser pages) and the generated routes wired to
// the handlers. It does not listen: main.ts does, and tests drive it over a real port.
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { openApiDocument, registerRoutes, sendError, HttpError } from '@pal-workflow/server-skeleton';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { DomainContext } from './domain/context.js';
import { handlers } from './handlers/index.js';
import { authenticator } from './http/authenticate.js';
import { registerPages } from './http/pages.js';

export interface BuildAppOptions {
  /** Log requests (pino, JSON lines). Tests usually turn it off. */
  logger?: boolean;
}

export async function buildApp(domain: DomainContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { config } = domain;
  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel },
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
  });

  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  app.setErrorHandler((error, request, reply) => sendError(request, reply, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, new HttpError(404, 'NOT_FOUND', `no operation at ${request.method} ${request.url.split('?')[0]}`)),
  );

  app.get('/healthz', async (_request, reply) => {
    try {
      await sql`select 1`.execute(domain.db);
      return { status: 'ok' };
    } catch (error) {
      app.log.error({ err: error }, 'health check failed');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  const document = servedDocument(domain);
  app.get('/openapi.json', async () => document);
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });

  registerPages(app, domain);

  await registerRoutes(app, {
    handlers,
    authenticate: authenticator(domain),
    serviceRoot: config.serviceRoot,
    userRoot: config.userRoot,
    bodyLimit: config.bodyLimitBytes,
  });
  return app;
}

/** The bundled OpenAPI document, with this server's address and configured roots. */
function servedDocument(domain: DomainContext): Record<string, unknown> {
  const { serviceRoot, userRoot, publicUrl } = domain.config;
  const doc = structuredClone(openApiDocument) as unknown as Record<string, unknown> & { paths: Record<string, unknown> };
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(doc.paths)) {
    const rewritten = path.replace(/^\/services\//, `/${serviceRoot}/`).replace(/^\/user\//, `/${userRoot}/`);
    paths[rewritten] = item;
  }
  return { ...doc, servers: [{ url: publicUrl }], paths };
}
