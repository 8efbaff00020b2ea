/**
 * The check every error answer of the service must pass, for tests that speak plain HTTP: the
 * status, the negotiated media type, and an errorResult whose every message carries the code.
 * XML answers are also validated against the XSDs, so an error body cannot drift from the schema.
 */
import type { Result } from '@pal-workflow/types';
import { decodeXml } from '@pal-workflow/validators';
import { expect } from 'vitest';
import { SchemaValidator } from './xsd-validator.js';

/** What a test read from one HTTP answer. */
export interface ErrorAnswer {
  status: number;
  /** Content-Type, '' when absent. */
  type: string;
  text: string;
}

let validator: SchemaValidator | undefined;

/** Checks an errorResult in the given format and returns its messages. */
export function expectError(
  answer: ErrorAnswer,
  status: number,
  code: string,
  format: 'xml' | 'json' = 'xml',
): string[] {
  expect(answer.status, answer.text).toBe(status);
  let result: Result;
  if (format === 'json') {
    expect(answer.type).toBe('application/json; charset=utf-8');
    result = JSON.parse(answer.text) as Result;
  } else {
    expect(answer.type).toBe('application/xml; charset=utf-8');
    expect(answer.text).toMatch(/^(<\?xml[^>]*\?>\s*)?<(\w+:)?errorResult\b/);
    validator ??= new SchemaValidator();
    validator.assertValid(answer.text);
    result = decodeXml(answer.text, 'errorResult');
  }
  expect(result.success).toBe(false);
  expect(result.messages?.length ?? 0).toBeGreaterThan(0);
  for (const m of result.messages ?? []) expect(m.type).toBe(code);
  return (result.messages ?? []).map((m) => m.message);
}
