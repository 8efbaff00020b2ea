// Which methods a path takes, for the 405 of a path that exists with other methods (RFC 9110
// §15.5.6: `PUT /services/rest/pals` is a method the resource does not allow, not a resource that
// is not there). The operations' paths and the service's own GET routes, matched as the router
// matches them (a parameter is one segment).
import { operations, type OperationSpec } from '@pal-workflow/server-skeleton';

const OWN_GET_ROUTES = ['/healthz', '/openapi.json'];

/** The methods of every route whose path matches, sorted, HEAD beside GET; none for no route. */
export function allowedMethodsOf(
  serviceRoot: string,
  userRoot: string,
): (path: string) => string[] {
  const routes = [
    ...(Object.values(operations) as OperationSpec[]).map((spec) => ({
      method: spec.method.toUpperCase(),
      path: `/${spec.root === 'service' ? serviceRoot : userRoot}${spec.path}`,
    })),
    ...OWN_GET_ROUTES.map((path) => ({ method: 'GET', path })),
  ].map(({ method, path }) => ({ method, pattern: new RegExp(`^${pathPattern(path)}/?$`) }));
  return (path) => {
    const methods = new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/** A route path as a regular expression: `:name` is one segment, the rest literal. */
function pathPattern(path: string): string {
  return path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
}
