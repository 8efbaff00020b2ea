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

const callers = new WeakMap<FastifyRequest, Caller>();

/** The API client that the authentication slot accepted for this request, if any. */
export function callerOf(request: FastifyRequest): Caller | undefined {
  return callers.get(request);
}

/** Wraps the skeleton's authentication slot so that the accepted caller is remembered. */
export function rememberingCaller(
  authenticate: (request: FastifyRequest) => AppContext | Promise<AppContext>,
): (request: FastifyRequest) => AppContext | Promise<AppContext> {
  // The context is the caller (it has each field): no object of its own per request.
  const remember = (request: FastifyRequest, context: AppContext): AppContext => {
    callers.set(request, context);
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
  app.addHook('preHandler', (request, _reply, done) => {
    const caller = callers.get(request);
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
