/** A body of countless wrong items is answered with the first problems, not each of them. */
import { describe, expect, it } from 'vitest';
import { DecodeError, decodeJson, decodeXml } from '../src/index.js';
import { MAX_DECODE_ISSUES, MAX_ISSUE_CHARS } from '../src/runtime/decode-error.js';
import { LARGE_BODY_CHARS } from '../src/runtime/json-codec.js';

function thrown(decode: () => unknown): DecodeError {
  try {
    decode();
  } catch (error) {
    if (error instanceof DecodeError) return error;
    throw error;
  }
  throw new Error('decoded without an error');
}

describe('a body with many problems', () => {
  it('JSON: names the first ones and counts the rest', () => {
    const body = JSON.stringify({
      postData: Array.from({ length: 1000 }, () => ({ name: 1, value: 2 })),
    });
    const error = thrown(() => decodeJson('consoleContent', body));
    expect(error.issues).toHaveLength(MAX_DECODE_ISSUES + 1);
    expect(error.issues[0]!.path).toBe('consoleContent.postData[0].name');
    expect(error.issues.at(-1)).toEqual({
      path: '',
      message: `${2000 - MAX_DECODE_ISSUES} more problems not listed (the first ${MAX_DECODE_ISSUES} are)`,
    });
    expect(error.message.length).toBeLessThan(4000);
  });

  it("JSON past LARGE_BODY_CHARS: walked to its first problems, zod's own messages", () => {
    const items = Array.from({ length: 100_000 }, (_, i) =>
      i % 2 ? { name: 'n', value: 2 } : { name: 'n', value: 'v', colour: 'red' },
    );
    const body = JSON.stringify({ postData: items });
    expect(body.length).toBeGreaterThan(LARGE_BODY_CHARS);
    const error = thrown(() => decodeJson('consoleContent', body));
    expect(error.issues).toHaveLength(MAX_DECODE_ISSUES + 1);
    // The same words as zod's for a small body.
    const small = thrown(() =>
      decodeJson('consoleContent', JSON.stringify({ postData: items.slice(0, 2) })),
    );
    expect(error.issues.slice(0, 2)).toEqual(small.issues);
    expect(small.issues[0]).toEqual({
      path: 'consoleContent.postData[0]',
      message: 'Unrecognized key: "colour"',
    });
    expect(error.issues.at(-1)!.message).toBe(
      `more problems not listed (the first ${MAX_DECODE_ISSUES} are)`,
    );
  });

  it('JSON past LARGE_BODY_CHARS that fits: decoded as a small one is', () => {
    const value = {
      postData: Array.from({ length: 5_000 }, (_, i) => ({ name: `n${i}`, value: 'v' })),
    };
    const body = JSON.stringify(value);
    expect(body.length).toBeGreaterThan(LARGE_BODY_CHARS);
    expect(decodeJson('consoleContent', body)).toEqual(value);
  });

  it('XML: stops at the first problem past the bound', () => {
    const attributes = Array.from({ length: 100_000 }, (_, i) => ` a${i}="1"`).join('');
    const body = `<consoleContent xmlns="urn:pal-workflow:pal"${attributes}/>`;
    const error = thrown(() => decodeXml(body, 'consoleContent'));
    expect(error.issues).toHaveLength(MAX_DECODE_ISSUES + 1);
    expect(error.issues[0]!.message).toContain('a0');
    expect(error.issues.at(-1)!.message).toBe(
      `more problems not listed (the first ${MAX_DECODE_ISSUES} are)`,
    );
  });

  it('one problem that names countless things is cut short', () => {
    const unknown = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key${i}`, 1]));
    const error = thrown(() => decodeJson('consoleContent', JSON.stringify(unknown)));
    expect(error.issues[0]!.message.length).toBeLessThanOrEqual(MAX_ISSUE_CHARS + 1);
    expect(error.issues[0]!.message).toMatch(/^Unrecognized keys: .*…$/);
  });

  it('a body with a few problems names each', () => {
    const body = JSON.stringify({ postData: [{ name: 1, value: 'x' }] });
    const error = thrown(() => decodeJson('consoleContent', body));
    expect(error.issues).toEqual([
      { path: 'consoleContent.postData[0].name', message: expect.any(String) },
    ]);
  });
});
