// The errors of the domain. Each carries the HTTP status and the stable code of docs/decisions.md
// ("Errors"): the HTTP layer maps any error with a numeric `statusCode` and a string `code` to an
// errorResult (`success=false`, `messages=[{message, type: code}]`), and everything else to a
// logged 500. Messages are written for the API's caller: they say what was wrong, never how the
// server works.

export abstract class DomainError extends Error {
  abstract readonly statusCode: number;
  abstract readonly code: string;
}

/** 404: no such id in the caller's enterprise. Another enterprise's id looks exactly the same. */
export class NotFoundError extends DomainError {
  readonly statusCode = 404;
  readonly code = 'NOT_FOUND';
  override readonly name = 'NotFoundError';
  constructor(message: string) {
    super(message);
  }
  /** `pal "expense-approval" not found` */
  static of(kind: string, id: string): NotFoundError {
    return new NotFoundError(`${kind} "${id}" not found`);
  }
}

/** 400: a value the operation does not accept. The message names the parameter. */
export class InvalidArgumentError extends DomainError {
  readonly statusCode = 400;
  readonly code = 'INVALID_ARGUMENT';
  override readonly name: string = 'InvalidArgumentError';
  constructor(message: string) {
    super(message);
  }
}

/** 409: the request is valid but clashes with the current state (a used e-mail, an illegal move). */
export class ConflictError extends DomainError {
  readonly statusCode = 409;
  readonly code = 'CONFLICT';
  override readonly name = 'ConflictError';
  /** `Retry-After` for a conflict that passes by itself (a run in progress). */
  readonly headers: Record<string, string>;
  constructor(message: string, retryAfterSeconds?: number) {
    super(message);
    this.headers =
      retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) };
  }
}

/**
 * 403: the caller is known but may not do this: C6 for an SSO without a console grant of that pal
 * under that profile; a browser session whose person may no longer act.
 */
export class ForbiddenError extends DomainError {
  readonly statusCode = 403;
  readonly code = 'FORBIDDEN';
  override readonly name = 'ForbiddenError';
  constructor(message: string) {
    super(message);
  }
}

/** 401: missing or wrong credentials. */
export class UnauthorizedError extends DomainError {
  readonly statusCode = 401;
  readonly code = 'UNAUTHORIZED';
  override readonly name = 'UnauthorizedError';
  constructor(message = 'missing or wrong credentials') {
    super(message);
  }
}

/**
 * 410: a single-use token (invitation, entry) that is unknown, used or expired. One message for
 * all three, so the answer tells nothing about which tokens exist.
 */
export class GoneError extends DomainError {
  readonly statusCode = 410;
  readonly code = 'TOKEN_EXPIRED';
  override readonly name = 'GoneError';
  constructor(message = 'this link is no longer valid: it was already used or has expired') {
    super(message);
  }
}

/** True for any error the HTTP layer may show to the caller as is. */
export function isDomainError(error: unknown): error is DomainError {
  return (
    error instanceof Error &&
    typeof (error as Partial<DomainError>).statusCode === 'number' &&
    typeof (error as Partial<DomainError>).code === 'string'
  );
}

/**
 * 422: a workflow run of C2 or T9 failed (their list answers have no success member to say so).
 * The code is the failure type of docs/workflows.md ("When a run fails"): WORKFLOW_ERROR,
 * WORKFLOW_TIMEOUT, WORKFLOW_MEMORY or NO_WORKFLOW.
 */
export class WorkflowFailedError extends DomainError {
  readonly statusCode = 422;
  override readonly name = 'WorkflowFailedError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * 429: the enterprise has as many workflow runs in progress on this node as it may (the runs on
 * workers and those waiting for one); `Retry-After` says when one has surely ended.
 */
export class TooManyRunsError extends DomainError {
  readonly statusCode = 429;
  readonly code = 'RATE_LIMITED';
  override readonly name = 'TooManyRunsError';
  readonly headers: Record<string, string>;
  constructor(inProgress: number, retryAfterSeconds: number) {
    super(
      `this enterprise has ${inProgress} workflow runs in progress, the most it may have; try again in ${retryAfterSeconds} s`,
    );
    this.headers = { 'Retry-After': String(retryAfterSeconds) };
  }
}
