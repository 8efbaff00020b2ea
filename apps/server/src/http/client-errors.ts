// Requests Node's HTTP parser refuses before any route sees them (a control character or a byte
// no header may hold, headers over Node's 16 KiB, a request that never finished arriving). They
// are answered as errorResults too (docs/decisions.md, "Errors"), in the format the request's
// Accept asks for when its line arrived (read from the bytes the parser was given), else XML;
// Fastify's own answer was a JSON object of its own shape. A browser's form that did not arrive
// in time gets a page instead.
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorResult, MEDIA_TYPE, negotiateMediaType } from '@pal-workflow/server-skeleton';
import { encodeJson, encodeXml } from '@pal-workflow/validators';
import type { FastifyInstance } from 'fastify';
import { publicPathOf, type Config } from '../config.js';
import { escapeHtml } from '../html.js';
import { page, PAGE_CSP, wantsPage } from './page.js';

interface ParserError extends Error {
  code?: string;
}

/**
 * The Accept line among the bytes the parser was given when it stopped (Node's `rawPacket` on a
 * parser error), if it arrived whole.
 */
function acceptInRaw(error: ParserError): string | undefined {
  const raw = (error as { rawPacket?: unknown }).rawPacket;
  if (!Buffer.isBuffer(raw)) return undefined;
  // Every line, joined as Node joins them for a request it reads: with two, the first alone
  // chose a format the second refused.
  const lines = [...raw.toString('latin1').matchAll(/\r\naccept[ \t]*:[ \t]*([^\r\n]*)(?=\r\n)/gi)];
  return lines.length ? lines.map((line) => line[1]!.trim()).join(', ') : undefined;
}

/** What each parser error is answered with; any other is broken HTTP (400). */
const ANSWERS: Record<string, { status: number; code: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    code: 'REQUEST_TIMEOUT',
    message: 'the request did not arrive in time',
  },
  HPE_INVALID_URL: {
    status: 400,
    code: 'INVALID_ARGUMENT',
    message:
      "the request's path or query holds a byte a URL may not: send text beyond ASCII percent-encoded as UTF-8 (%XX)",
  },
  HPE_INVALID_METHOD: {
    status: 501,
    code: 'NOT_IMPLEMENTED',
    message: 'the request method is none the service knows: its operations take GET, HEAD and POST',
  },
  HPE_INVALID_VERSION: {
    status: 505,
    code: 'HTTP_VERSION_NOT_SUPPORTED',
    message: 'the service speaks HTTP/1.1 (and 1.0)',
  },
  HPE_INVALID_TRANSFER_ENCODING: {
    status: 400,
    code: 'INVALID_ARGUMENT',
    message:
      'the body is framed twice (Content-Length and Transfer-Encoding) or with a Transfer-Encoding that does not end in chunked: send one of them',
  },
  HPE_UNEXPECTED_CONTENT_LENGTH: {
    status: 400,
    code: 'INVALID_ARGUMENT',
    message: 'Content-Length is given more than once',
  },
  HPE_INVALID_CHUNK_SIZE: {
    status: 400,
    code: 'INVALID_ARGUMENT',
    message: 'a chunk of the chunked body does not begin with its size in hexadecimal',
  },
  // A header section over the limit is a bad header value: 400, as DESIGN's table of statuses has it.
  HPE_HEADER_OVERFLOW: {
    status: 400,
    code: 'INVALID_ARGUMENT',
    message: 'the request headers are larger than the server reads (16 KiB)',
  },
};
const BROKEN_HTTP = {
  status: 400,
  code: 'INVALID_ARGUMENT',
  message:
    "the request is not valid HTTP: a header name or value holds a character HTTP does not allow (send text beyond ASCII as UTF-8 bytes or in the form UTF-8''%XX), or its framing is broken",
};

/** A page's answer to a form that did not arrive in time: a person reads it, not a client. */
function timedOutPage(path: string): string {
  return page(
    'This form took too long to arrive',
    `<h1>This form took too long to arrive</h1><p>It was still arriving after the time the service waits for one, so nothing in it was saved. If you chose a large file, choose a smaller one, or send the form again where the connection is faster.</p><p><a href="${escapeHtml(path)}">Back to the page</a></p>`,
  );
}

type AnsweringSocket = Socket & {
  _httpMessage?: { headersSent?: boolean; req?: IncomingMessage };
};

/**
 * Fastify's `clientErrorHandler` (called with the instance as `this`): the answer is written to
 * the socket, which is then closed.
 */
export function clientErrorHandler({
  serviceRoot,
  publicUrl,
}: Pick<Config, 'serviceRoot' | 'publicUrl'>) {
  // The page's address as the browser sees it: under PUBLIC_URL's path (a proxy strips it).
  const publicPath = publicPathOf(publicUrl);
  return function answerClientError(
    this: FastifyInstance,
    error: ParserError,
    socket: Socket,
  ): void {
    // A reset connection has nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, code, message } = (error.code && ANSWERS[error.code]) || BROKEN_HTTP;
    this.log.debug({ err: error }, 'refused by the HTTP parser');
    // As Node's own handler: not into an answer already on its way (a 404 sent before the body
    // was read, then broken framing), which the client would take for its next answer.
    const answering = (socket as AnsweringSocket)._httpMessage;
    if (socket.writable && !answering?.headersSent) {
      // A request whose headers arrived (its body did not) may be a browser's form: a page.
      const request = answering?.req;
      const path = request?.url?.split('?')[0];
      const html =
        status === 408 &&
        path !== undefined &&
        wantsPage(path, request!.headers.accept, serviceRoot);
      const accept = request ? request.headers.accept : acceptInRaw(error);
      const mediaType = negotiateMediaType(accept, false) ?? MEDIA_TYPE.xml;
      const result = errorResult({ status, code, messages: [message], headers: {} });
      const body = html
        ? timedOutPage(`${publicPath}${path}`)
        : mediaType === MEDIA_TYPE.json
          ? encodeJson('errorResult', result)
          : encodeXml('errorResult', result);
      const headers = html
        ? `Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nContent-Security-Policy: ${PAGE_CSP}\r\n`
        : `Content-Type: ${mediaType}; charset=utf-8\r\n`;
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}

/**
 * Node's `checkExpectation`: a request whose Expect is not `100-continue` (which Node meets on
 * its own). 417 with an errorResult, and the connection closed: its body is not read.
 */
export function expectationFailed(_request: IncomingMessage, response: ServerResponse): void {
  const body = encodeXml(
    'errorResult',
    errorResult({
      status: 417,
      code: 'EXPECTATION_FAILED',
      messages: ['the server meets no Expect but 100-continue'],
      headers: {},
    }),
  );
  response.writeHead(417, {
    'Content-Type': 'application/xml; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
