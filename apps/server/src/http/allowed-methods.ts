// Which methods a path takes, for the 405 of a path that exists with other methods (RFC 9110
// §15.5.6: `PUT /services/rest/pals` is a method the resource does not allow, not a resource that
// is not there). Every route is recorded as it is registered (onRoute), pages and the service's
// own routes too, and a path is matched as the router matches it: a parameter is one segment, a
// `*` the rest, and a trailing slash is another path.

interface RecordedRoute {
  methods: string[];
  pattern: RegExp;
}

export class RouteMethods {
  private readonly routes: RecordedRoute[] = [];

  /** Records a route; `url` as Fastify has it, with its prefix. */
  add(method: string | string[], url: string): void {
    const methods = (Array.isArray(method) ? method : [method]).map((m) => m.toUpperCase());
    this.routes.push({ methods, pattern: new RegExp(`^${pathPattern(url)}$`) });
  }

  /** The methods of every route whose path matches, sorted (HEAD where Fastify added one); none for no route. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes)
      if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
    return [...methods].sort();
  }
}

/** A route path as a regular expression: `:name` is one segment, `*` the rest, the rest literal. */
function pathPattern(url: string): string {
  return url
    .split('/')
    .map((segment) =>
      segment.startsWith(':')
        ? '[^/]+'
        : segment === '*'
          ? '.*'
          : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
}
