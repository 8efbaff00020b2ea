// Who is acting, from where, in which request: what an audit record names (domain/audit.ts)
// without every domain function taking it as a parameter. The HTTP layer opens a scope per
// request (http/request-scope.ts), the CLI one per command; Node's AsyncLocalStorage carries it
// through every await of the work done for that request, the workflow engine's included.
import { AsyncLocalStorage } from 'node:async_hooks';

/** `client`: an API client (its username); `sso`: a person by their SSO; `operator`: the CLI. */
export type ActorType = 'client' | 'sso' | 'operator' | 'system' | 'anonymous';

export interface Actor {
  type: ActorType;
  /** The client's username, the SSO id, the operator's login; null when unknown. */
  id: string | null;
}

export interface RequestScope {
  requestId?: string;
  ip?: string;
  /** Set once known (an API client when authenticated; a page may name the session's person). */
  actor?: Actor;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs `work` (and everything it awaits) in the scope. */
export function runInScope<T>(scope: RequestScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** The scope of the work running now; undefined outside any (a sweep, a test's direct call). */
export function currentScope(): RequestScope | undefined {
  return scopes.getStore();
}
