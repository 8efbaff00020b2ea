/**
 * The XML half of the client. openapi-generator's TypeScript clients send no Accept
 * header and parse every body as JSON; this middleware makes the same typed calls
 * work in XML: it asks for the chosen format, encodes JSON request bodies as XML
 * with the validators' codec, and decodes XML responses (including errorResults)
 * back to the JSON the generated mappers expect. It also maps the default path
 * roots to the configured ones.
 */
import { decodeXml, encodeXml, type RootName, type RootValues } from '@pal-workflow/validators';
import type { Middleware } from './generated/runtime.gen.js';
import { clientOperations, defaultRoots } from './generated/operations.gen.js';

export type WireFormat = 'json' | 'xml';

export interface XmlMiddlewareOptions {
  format: WireFormat;
  serviceRoot: string;
  userRoot: string;
  /**
   * Path of the base URL when the service is served below one (`/api` for
   * `https://host/api`): the roots are found and replaced after it. Default: none.
   */
  basePath?: string;
}

export function wireMiddleware(options: XmlMiddlewareOptions): Middleware {
  const routes = clientOperations.map((op) => ({
    op,
    // Its search headers in lower case: header names are matched whatever their case.
    searchNames: new Set(op.searchHeaders.map((n) => n.toLowerCase())),
    regex: new RegExp(
      op.pattern
        .replace('{service}', escapeRegex(options.serviceRoot))
        .replace('{user}', escapeRegex(options.userRoot)),
    ),
  }));
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  const find = (method: string | undefined, url: string) => {
    const path = pathAfterBase(new URL(url).pathname, basePath);
    return routes.find(
      (r) => r.op.method === (method ?? 'GET').toUpperCase() && r.regex.test(path),
    );
  };

  return {
    async pre({ url, init }) {
      const target = rewriteRoots(url, options, basePath);
      const route = find(init.method, target);
      const op = route?.op;
      const headers = new Headers(withSearchHeadersEncoded(init.headers, route?.searchNames));
      headers.set('Accept', options.format === 'xml' ? 'application/xml' : 'application/json');
      let body = init.body;
      if (
        options.format === 'xml' &&
        typeof body === 'string' &&
        headers.get('Content-Type')?.startsWith('application/json')
      ) {
        if (op?.bodyRoot) {
          body = encodeXml(op.bodyRoot, JSON.parse(body) as RootValues[RootName]);
          headers.set('Content-Type', 'application/xml');
        }
      }
      return { url: target, init: { ...init, headers, body } };
    },
    async post({ response }) {
      const type = response.headers.get('Content-Type') ?? '';
      if (!/^(application|text)\/xml/.test(type)) return response;
      const { value } = decodeXml(await response.text());
      const headers = new Headers(response.headers);
      headers.set('Content-Type', 'application/json');
      headers.delete('Content-Length');
      return new Response(JSON.stringify(value), {
        status: response.status,
        statusText: response.statusText,
        headers,
      });
    },
  };
}

/**
 * Search headers carry text as it is only when HTTP keeps it so (printable ASCII, no space at
 * either end); any other text goes in RFC 8187's form, `UTF-8''M%C3%BCller`, which the service
 * decodes. fetch itself refuses a header beyond Latin-1, and would send Latin-1 as single bytes.
 */
export function searchHeaderValue(text: string): string {
  if (
    text === '' ||
    (/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(text) && !/^utf-8'/i.test(text))
  )
    return text;
  const wellFormed = text.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
  // encodeURIComponent leaves * ' ( ) as they are; RFC 8187's attr-char does not include them.
  const escaped = encodeURIComponent(wellFormed).replace(
    /[*'()]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `UTF-8''${escaped}`;
}

/** `names`: the operation's search headers in lower case. */
function withSearchHeadersEncoded(
  headers: RequestInit['headers'],
  names: ReadonlySet<string> | undefined,
): RequestInit['headers'] {
  if (
    !names ||
    names.size === 0 ||
    !headers ||
    headers instanceof Headers ||
    Array.isArray(headers)
  )
    return headers;
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      names.has(name.toLowerCase()) ? searchHeaderValue(String(value)) : value,
    ]),
  );
}

function rewriteRoots(url: string, options: XmlMiddlewareOptions, basePath: string): string {
  const u = new URL(url);
  const path = pathAfterBase(u.pathname, basePath);
  // The generated client's paths carry the default roots.
  for (const kind of ['service', 'user'] as const) {
    const from = `/${defaultRoots[kind]}/`;
    const to = `/${kind === 'service' ? options.serviceRoot : options.userRoot}/`;
    if (from !== to && path.startsWith(from)) {
      u.pathname = basePath + to + path.slice(from.length);
      break;
    }
  }
  return u.toString();
}

/** The operation's own path: what follows the base URL's path. */
function pathAfterBase(pathname: string, basePath: string): string {
  return basePath && pathname.startsWith(`${basePath}/`)
    ? pathname.slice(basePath.length)
    : pathname;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
