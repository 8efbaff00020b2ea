// The request scope of every route (domain/request-scope.ts): its id, the caller's address and,
// once authenticated, the API client. Audit records and idempotency keys read it from here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { runInScope } from '../domain/request-scope.js';
import type { AppContext } from './app-context.js';

/** The authenticated API client of a request. */
export interface Caller {
  enterpriseId: string;
  clientId: string;
  /** Its BASIC username: what audit records name it by. */
  username: string;
}

// On the request itself (a decoration, so every request has the same shape), not in a WeakMap
// keyed by the request: an entry per request costs about 0.6 µs, most of it in the GC.
declare module 'fastify' {
  interface FastifyRequest {
    /** The accepted API client (rememberingCaller); null before authentication or without it. */
    palCaller: Caller | null;
  }
}

/** The API client that the authentication slot accepted for this request, if any. */
export function callerOf(request: FastifyRequest): Caller | undefined {
  return request.palCaller ?? undefined;
}

/** Wraps the skeleton's authentication slot so that the accepted caller is remembered. */
export function rememberingCaller(
  authenticate: (request: FastifyRequest) => AppContext | Promise<AppContext>,
): (request: FastifyRequest) => AppContext | Promise<AppContext> {
  // The context is the caller (it has each field): no object of its own per request.
  const remember = (request: FastifyRequest, context: AppContext): AppContext => {
    request.palCaller = context;
    return context;
  };
  return (request) => {
    const result = authenticate(request);
    return result instanceof Promise
      ? result.then((context) => remember(request, context))
      : remember(request, result);
  };
}

/**
 * Opens the scope before the handler: after authentication and the body, so the handler and all
 * it awaits run inside it. (Callback style: `done` runs the handler within the scope.)
 */
export function registerRequestScope(app: FastifyInstance): void {
  app.decorateRequest('palCaller', null);
  app.addHook('preHandler', (request, _reply, done) => {
    const caller = request.palCaller;
    runInScope(
      {
        requestId: request.id,
        ip: request.ip,
        ...(caller ? { actor: { type: 'client', id: caller.username } } : {}),
      },
      done,
    );
  });
}
