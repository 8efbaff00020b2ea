// What every handler receives: the domain (database, settings, mailer, clock) and the caller,
// an API client of one enterprise. Every query a handler makes is scoped by `enterpriseId`.
import type { DomainContext } from '../domain/context.js';

export interface AppContext {
  readonly domain: DomainContext;
  readonly enterpriseId: string;
  readonly clientId: string;
  /** The request's id (X-Request-Id), for log lines written on its behalf (pal.log). */
  readonly requestId: string;
}
