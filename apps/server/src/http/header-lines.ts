// How many lines of one header a request came with. Node keeps the first of several lines of a
// singleton header (Host, Authorization), where a proxy in front may have read another: such a
// request is refused, so the raw lines are counted.
import type { FastifyRequest } from 'fastify';

/** The request's lines of the header `name` (lower case), counted up to `stopAt`. */
export function headerLines(request: FastifyRequest, name: string, stopAt = Infinity): number {
  const raw = request.raw.rawHeaders;
  let lines = 0;
  for (let i = 0; i < raw.length && lines < stopAt; i += 2)
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) lines++;
  return lines;
}
