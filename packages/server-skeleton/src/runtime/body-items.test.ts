import { describe, expect, it } from 'vitest';
import { checkBodyItems, DEFAULT_BODY_ITEM_LIMIT } from './body-items.js';
import { HttpError } from './http-error.js';

const fits = (text: string, kind: 'xml' | 'json', limit: number) => {
  try {
    checkBodyItems(text, kind, limit);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).statusCode).toBe(413);
    expect((error as HttpError).message).toBe(
      `the body holds more than ${limit} ${kind === 'xml' ? 'elements' : 'values'}`,
    );
    return false;
  }
};

describe('checkBodyItems', () => {
  it('counts the start tags of an XML body, not its end tags, declaration or comments', () => {
    const xml = '<?xml version="1.0"?><!-- a --><a><b>1</b><c/></a>';
    expect(fits(xml, 'xml', 3)).toBe(true);
    expect(fits(xml, 'xml', 2)).toBe(false);
    expect(fits('no markup at all', 'xml', 0)).toBe(true);
  });

  it("counts a JSON body's containers and members, skipping strings whole", () => {
    // The outer { and [, each object's { and the comma between its members, and the comma
    // between the two objects: 1 + 1 + 2 + 2 + 1.
    const json = '{"postData":[{"name":"a","value":"1"},{"name":"b","value":"2"}]}';
    expect(fits(json, 'json', 7)).toBe(true);
    expect(fits(json, 'json', 6)).toBe(false);
    // Quotes, backslashes and every special character inside strings count for nothing.
    const tricky = JSON.stringify({ a: '"{[,]}"\\', b: '\\\\", [1,2]' });
    expect(JSON.parse(tricky)).toBeTypeOf('object');
    expect(fits(tricky, 'json', 2)).toBe(true);
    expect(fits(tricky, 'json', 1)).toBe(false);
    // An unterminated string ends the count; the parser refuses the body afterwards.
    expect(fits('{"a": "never closed, {[,', 'json', 1)).toBe(true);
  });

  it('lets a large body of few items through, and stops counting at the limit', () => {
    const document = JSON.stringify({ content: 'QUJD'.repeat(5_000_000) });
    expect(fits(document, 'json', 10)).toBe(true);
    const many = `[${'1,'.repeat(DEFAULT_BODY_ITEM_LIMIT)}1]`;
    expect(fits(many, 'json', DEFAULT_BODY_ITEM_LIMIT)).toBe(false);
    expect(fits(many, 'json', DEFAULT_BODY_ITEM_LIMIT + 1)).toBe(true);
  });
});
