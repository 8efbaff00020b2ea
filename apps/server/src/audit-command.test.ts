import { describe, expect, it } from 'vitest';
import { parseSince } from './audit-command.js';

const NOW = new Date('2026-11-28T12:00:00Z');

describe('pal audit --since', () => {
  it('takes a date, a date-time and a span back from now', () => {
    expect(parseSince('2028-02-29', NOW).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(parseSince('2026-01-31T12:30:00Z', NOW).toISOString()).toBe('2026-01-31T12:30:00.000Z');
    expect(parseSince('2026-01-31T12:30:00+02:00', NOW).toISOString()).toBe(
      '2026-01-31T10:30:00.000Z',
    );
    expect(parseSince('90m', NOW).toISOString()).toBe('2026-11-28T10:30:00.000Z');
    expect(parseSince('7d', NOW).toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });

  it('refuses a day the calendar does not have, instead of rolling it into the next month', () => {
    for (const day of [
      '2030-02-31',
      '2027-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '2026-01-00',
    ])
      expect(() => parseSince(day, NOW), day).toThrow('--since: expected an ISO-8601 date');
    expect(() => parseSince('2030-02-31T10:00:00Z', NOW)).toThrow('--since');
  });

  it('refuses words and spans it does not know', () => {
    for (const text of ['yesterday', '7w', '-1d', '', '2026-1-5'])
      expect(() => parseSince(text, NOW), text).toThrow('--since');
  });
});
