import { describe, expect, it } from 'vitest';
import { DEFAULT_FORM_LIMITS, parseMultipart, parseUrlEncoded } from './forms.js';
import { HttpError } from './http-error.js';

const unlimited = { maxFields: Infinity, maxFiles: Infinity };

function refusal(run: () => unknown): HttpError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error('expected a refusal');
}

describe('parseUrlEncoded', () => {
  it('collects the values of a repeated name in order, also for 1 MiB of repeats', () => {
    expect(parseUrlEncoded('a=1&b=2&a=3&a=4')).toEqual({ a: ['1', '3', '4'], b: '2' });
    // 262,144 repeats. Each one used to copy the array so far (quadratic: minutes for this body,
    // the whole event loop blocked); appended in place it is linear. npm run bench is where speed
    // is measured; here it is only the test's own time-out that would catch a return of the old way.
    const body = 'a=1&'.repeat(256 * 1024);
    const fields = parseUrlEncoded(body, unlimited);
    expect(fields.a).toHaveLength(256 * 1024);
    expect((fields.a as string[]).every((v) => v === '1')).toBe(true);
  });

  it('decodes as browsers encode: + and %XX; an escape that is not UTF-8 is a 400', () => {
    expect(
      parseUrlEncoded('name=Zo%C3%AB+Li&email=z%40example.test&pct=100%25&empty=&bare'),
    ).toEqual({ name: 'Zoë Li', email: 'z@example.test', pct: '100%', empty: '', bare: '' });
    expect(parseUrlEncoded('')).toEqual({});
    // No browser sends these; the parser kept them as they came, a value the sender never meant.
    for (const odd of ['odd=%E0%A4%A', 'odd=%ED%A0%80', 'odd=%FF', '%zz=1'])
      expect(() => parseUrlEncoded(`a=1&${odd}`), odd).toThrow('is not percent-encoded UTF-8');
  });

  it('reads "__proto__" as a field, on an object that inherits nothing', () => {
    const fields = parseUrlEncoded('__proto__=a&constructor=b');
    expect('toString' in fields).toBe(false);
    expect(Object.hasOwn(fields, '__proto__')).toBe(true);
    expect(fields.__proto__).toBe('a');
    expect(fields.constructor).toBe('b');
  });

  it('refuses a form of more fields than the cap with 413, counting a repeated name each time', () => {
    const max = DEFAULT_FORM_LIMITS.maxFields;
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `f${i % 3}=${i}`).join('&');
    expect(parseUrlEncoded(fields(max)).f0).toHaveLength(Math.ceil(max / 3));
    const error = refusal(() => parseUrlEncoded(fields(max + 1)));
    expect([error.statusCode, error.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
    expect(error.message).toBe(`a form holds at most ${max} fields and 10 files`);
    // 1 MiB of one repeated name is refused the same way, before anything is decoded.
    expect(refusal(() => parseUrlEncoded('a=1&'.repeat(256 * 1024))).statusCode).toBe(413);
    // Empty pieces are no fields.
    expect(parseUrlEncoded(`${'&'.repeat(1000)}a=1${'&'.repeat(1000)}`)).toEqual({ a: '1' });
  });
});

describe('parseMultipart', () => {
  const boundary = 'b0undary';
  const body = (parts: [string, string][]) =>
    Buffer.from(
      parts
        .map(
          ([n, v]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`,
        )
        .join('') + `--${boundary}--\r\n`,
    );
  const type = `multipart/form-data; boundary=${boundary}`;

  it('collects repeated names in order and caps the fields with 413', async () => {
    expect(
      await parseMultipart(
        type,
        body([
          ['a', '1'],
          ['b', '2'],
          ['a', '3'],
          ['a', '4'],
        ]),
      ),
    ).toEqual({ a: ['1', '3', '4'], b: '2' });
    const many = Array.from({ length: 3 }, (_, i): [string, string] => ['x', String(i)]);
    await expect(
      parseMultipart(type, body(many), { maxFields: 2, maxFiles: 0 }),
    ).rejects.toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
  });
});
