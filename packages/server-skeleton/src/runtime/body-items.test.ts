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
    expect((error as HttpError).message).toMatch(
      new RegExp(`^the body holds more than ${limit} items \\(`),
    );
    return false;
  }
};
/** The fewest items `text` is let through with. */
const items = (text: string, kind: 'xml' | 'json') => {
  let n = 0;
  while (!fits(text, kind, n)) n++;
  return n;
};

describe('checkBodyItems', () => {
  it('counts what an XML parser pays for: tags but end tags, attributes, references', () => {
    // <?xml, its =, the comment, <a, <b, <c.
    expect(items('<?xml version="1.0"?><!-- a --><a><b>1</b><c/></a>', 'xml')).toBe(6);
    // Few elements, many attributes or references: as dear to parse as many elements.
    expect(items(`<a${' x=""'.repeat(1000)}/>`, 'xml')).toBe(1001);
    expect(items(`<a>${'&amp;&#65;'.repeat(500)}</a>`, 'xml')).toBe(1001);
    expect(items(`<a>${'<?p?><![CDATA[x]]>'.repeat(500)}</a>`, 'xml')).toBe(1001);
    expect(items('no markup at all', 'xml')).toBe(0);
  });

  it("counts a JSON body's containers, members and strings", () => {
    // { "postData" [ and, for each of the two objects, { "name" "a" , "value" "1", and the comma
    // between them: 3 + 6 + 1 + 6.
    const json = '{"postData":[{"name":"a","value":"1"},{"name":"b","value":"2"}]}';
    expect(items(json, 'json')).toBe(16);
    // Brackets and commas inside strings count for nothing; an escaped quote counts once.
    const tricky = JSON.stringify({ a: '"{[,]}"\\', b: '\\\\", [1,2]' });
    expect(JSON.parse(tricky)).toBeTypeOf('object');
    // { "a" "…" with its 2 escaped quotes , "b" "…" with its 1.
    expect(items(tricky, 'json')).toBe(9);
    // An unterminated string ends the count; the parser refuses the body afterwards.
    expect(items('{"a": "never closed, {[,', 'json')).toBe(3);
  });

  it('lets a large body of few items through, and stops counting at the limit', () => {
    const document = JSON.stringify({ content: 'QUJD'.repeat(5_000_000) });
    expect(fits(document, 'json', 3)).toBe(true);
    expect(fits(`<d>${'QUJD'.repeat(5_000_000)}==</d>`, 'xml', 3)).toBe(true);
    const many = `[${'1,'.repeat(DEFAULT_BODY_ITEM_LIMIT)}1]`;
    expect(fits(many, 'json', DEFAULT_BODY_ITEM_LIMIT)).toBe(false);
    expect(fits(many, 'json', DEFAULT_BODY_ITEM_LIMIT + 1)).toBe(true);
    // Strings or escaped quotes by the million are refused once the limit is reached.
    expect(fits('"'.repeat(2_000_000), 'json', DEFAULT_BODY_ITEM_LIMIT)).toBe(false);
    expect(fits(`"${'\\"'.repeat(1_000_000)}"`, 'json', DEFAULT_BODY_ITEM_LIMIT)).toBe(false);
  });
});
