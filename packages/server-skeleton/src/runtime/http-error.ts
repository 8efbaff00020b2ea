/**
 * An error with an HTTP status and a stable code, written as an errorResult.
 * Any thrown object with a numeric `statusCode` and a string `code` is treated the
 * same way, so apps can keep their own error classes free of this package.
 */
export type ErrorCode =
  | 'INVALID_ARGUMENT'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'CONFLICT'
  | 'GONE'
  | 'TOKEN_EXPIRED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'NOT_IMPLEMENTED'
  | 'INTERNAL';

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  501: 'NOT_IMPLEMENTED',
};

export const badRequest = (message: string) => new HttpError(400, 'INVALID_ARGUMENT', message);
export const notAcceptable = (accept: string) =>
  new HttpError(
    406,
    'NOT_ACCEPTABLE',
    `cannot answer in any format that Accept allows ("${accept}")`,
  );
