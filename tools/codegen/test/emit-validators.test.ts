/** Given a member, want this zod expression: the mappings of emit/validators.ts, case by case. */
import { describe, expect, it } from 'vitest';
import { zodMember } from '../src/emit/validators.js';
import { member } from './model-builders.js';

describe('emit/validators', () => {
  it.each([
    { given: member({}), want: 'xsString' },
    { given: member({ optional: true }), want: 'xsString.optional()' },
    { given: member({ maxLength: 1000 }), want: 'xsString.max(1000)' },
    { given: member({ maxLength: 1000, optional: true }), want: 'xsString.max(1000).optional()' },
    { given: member({ maxLength: 5, list: true }), want: 'z.array(xsString.max(5))' },
    { given: member({ nillable: true, optional: true }), want: 'xsString.nullable().optional()' },
    { given: member({ type: { kind: 'builtin', name: 'int' } }), want: 'xsInt' },
    {
      given: member({ type: { kind: 'named', name: 'Item' }, list: true }),
      want: 'z.array(zItem)',
    },
    { given: member({ type: { kind: 'enum', name: 'Kind' } }), want: 'zKind' },
  ])('$want', ({ given, want }) => {
    expect(zodMember(given)).toBe(want);
  });
});
