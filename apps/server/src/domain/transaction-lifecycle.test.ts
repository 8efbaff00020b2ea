import { describe, expect, it } from 'vitest';
import { ConflictError } from './errors.js';
import {
  SYSTEM_STATUSES,
  TRANSACTION_EVENTS,
  WEB_SERVICE_EVENTS,
  WEB_SERVICE_STATUSES,
  nextSystemStatus,
  nextWebServiceStatus,
  type TransactionEvent,
  type WebServiceEvent,
} from './transaction-lifecycle.js';

// The whole table, written out: a change to the machine must change this test.
const SYSTEM_MOVES: Record<string, Partial<Record<TransactionEvent, string>>> = {
  OPEN: { complete: 'COMPLETED', cancel: 'CANCELLED', expire: 'EXPIRED' },
  COMPLETED: { reopen: 'OPEN', archive: 'ARCHIVED' },
  CANCELLED: { reopen: 'OPEN', archive: 'ARCHIVED' },
  EXPIRED: { reopen: 'OPEN', archive: 'ARCHIVED' },
  ARCHIVED: {},
};

const WEB_MOVES: Record<string, Partial<Record<WebServiceEvent, string>>> = {
  IDLE: { start: 'RUNNING' },
  RUNNING: { succeed: 'SUCCEEDED', fail: 'FAILED' },
  SUCCEEDED: { start: 'RUNNING' },
  FAILED: { start: 'RUNNING' },
};

describe('systemStatus machine', () => {
  for (const from of SYSTEM_STATUSES) {
    for (const event of Object.keys(TRANSACTION_EVENTS) as TransactionEvent[]) {
      const to = SYSTEM_MOVES[from][event];
      it(`${from} --${event}--> ${to ?? '409'}`, () => {
        if (to) expect(nextSystemStatus(from, event)).toBe(to);
        else expect(() => nextSystemStatus(from, event)).toThrow(ConflictError);
      });
    }
  }

  it('says what was refused and from where it is allowed', () => {
    expect(() => nextSystemStatus('ARCHIVED', 'reopen')).toThrow(
      'cannot reopen a transaction whose systemStatus is ARCHIVED (allowed from COMPLETED, CANCELLED, EXPIRED)',
    );
  });
});

describe('webServiceStatus machine', () => {
  for (const from of WEB_SERVICE_STATUSES) {
    for (const event of Object.keys(WEB_SERVICE_EVENTS) as WebServiceEvent[]) {
      const to = WEB_MOVES[from][event];
      it(`${from} --${event}--> ${to ?? '409'}`, () => {
        if (to) expect(nextWebServiceStatus(from, event)).toBe(to);
        else expect(() => nextWebServiceStatus(from, event)).toThrow(ConflictError);
      });
    }
  }
});
