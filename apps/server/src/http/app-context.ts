// What every handler receives: the domain (database, settings, mailer, clock, and the workflow
// workers) and the caller,
// an API client of one enterprise. Every query a handler makes is scoped by `enterpriseId`.
import type { WorkflowContext } from '../workflows/context.js';

export interface AppContext {
  readonly domain: WorkflowContext;
  readonly enterpriseId: string;
  readonly clientId: string;
  /** The API client's BASIC username: what audit records name it by. */
  readonly username: string;
  /** The request's id (X-Request-Id), for log lines written on its behalf (pal.log). */
  readonly requestId: string;
}
