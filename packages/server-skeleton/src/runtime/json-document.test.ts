import { DecodeError } from '@pal-workflow/validators';
import { describe, expect, it } from 'vitest';
import { checkJsonObject } from './json-document.js';

const refusal = (text: string): string => {
  try {
    checkJsonObject(text);
  } catch (error) {
    if (error instanceof DecodeError) return error.message;
    throw error;
  }
  return 'taken';
};

describe('checkJsonObject: C5 free JSON document', () => {
  it('takes an object of any members, and XML text escaped or not', () => {
    for (const text of [
      '{}',
      '{"__proto__":{"a":[1,"x",null]}}',
      '{"a":"tab\\tLF\\nCR\\r é \\u00e9 \\ud83d\\ude00 😀"}',
      '{"\\u0041":"\\ufffd"}',
    ])
      expect(refusal(text), text).toBe('taken');
  });

  it('refuses a value or a member name with a character XML cannot carry, naming where', () => {
    expect(refusal('{"note":"a\\u0000b"}')).toBe(
      'note: contains a character that XML cannot carry',
    );
    expect(refusal('{"order":{"lines":["ok","\\u001b[31m"]}}')).toBe(
      'order.lines[1]: contains a character that XML cannot carry',
    );
    expect(refusal('{"order":{"a\\u0001":"x"}}')).toBe(
      'order: a member name contains a character that XML cannot carry',
    );
    expect(refusal('{"a":"\\ud800"}')).toBe('a: contains a character that XML cannot carry');
    expect(refusal('{"a":"\uffff"}')).toBe('a: contains a character that XML cannot carry');
    expect(refusal('{"a":"\\u0000","b":{"c":"\\u0002"}}')).toBe(
      'a: contains a character that XML cannot carry; b.c: contains a character that XML cannot carry',
    );
  });

  it('names the first 20 and says that more were left out', () => {
    const many = `{${Array.from({ length: 30 }, (_, i) => `"m${i}":"\\u0000"`).join(',')}}`;
    const message = refusal(many);
    expect(message.split('; ')).toHaveLength(21);
    expect(message).toMatch(/^m0: .*more problems not listed/);
  });

  it('still refuses what is not one object, and a member given twice', () => {
    expect(refusal('[1]')).toBe('expected a JSON object');
    expect(refusal('{"a":1,"a":2}')).toMatch(/member "a" given more than once/);
  });
});
