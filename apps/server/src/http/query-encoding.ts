// A query string's escapes must decode to UTF-8, as a path's and a form's must: Fastify's parser
// keeps an escape it cannot decode as the literal text ("%FFx" reached an operation as those four
// characters, and looked up an SSO of that id), so such a query is refused before any route.

/** The first piece of `url`'s query that is not percent-encoded UTF-8, or undefined. */
export function badlyEncodedQueryPiece(url: string): string | undefined {
  const at = url.indexOf('?');
  if (at === -1 || url.indexOf('%', at) === -1) return undefined;
  for (const piece of url.slice(at + 1).split('&')) {
    if (!piece.includes('%')) continue;
    try {
      decodeURIComponent(piece);
    } catch {
      return piece;
    }
  }
  return undefined;
}
