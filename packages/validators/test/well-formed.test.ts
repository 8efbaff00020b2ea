/** C5's document taken as it is: well-formed XML, nothing more asked of it. */
import { describe, expect, it } from 'vitest';
import { checkWellFormedDocument } from '../src/index.js';

describe('checkWellFormedDocument', () => {
  // Its time grows with the document's length: inputs that took seconds, or the heap, before.
  it('reads deep prefix declarations and unterminated openers in one pass', () => {
    const depth = 20_000;
    const deep =
      Array.from({ length: depth }, (_, i) => `<a xmlns:p${i}="u">`).join('') +
      '</a>'.repeat(depth);
    expect(() => checkWellFormedDocument(deep)).not.toThrow();
    const openers = `<a b="${'<!--'.repeat(80_000)}"/>`;
    expect(() => checkWellFormedDocument(openers)).toThrow();
    const comments = `<a>${'<!-- x -->'.repeat(50_000)}</a>`;
    expect(() => checkWellFormedDocument(comments)).not.toThrow();
    // One element of a million attributes (8 MB): a repeated regex group overflowed the stack.
    const attributes = `<a${Array.from({ length: 1_000_000 }, (_, i) => ` a${i}=""`).join('')}/>`;
    expect(() => checkWellFormedDocument(attributes)).not.toThrow();
  });

  it.each([
    '<a/>',
    '<?xml version="1.0" encoding="UTF-8"?>\n<a>text</a>\n',
    '<a xmlns:x="urn:x"><x:b x:c="1">&amp;&lt;&#x41;&#13;&#128512;</x:b><!-- note --></a>',
    '<x:a xmlns:x="urn:x"><x:b/></x:a>',
    '<a xml:lang="en" xmlns="urn:default"><b/></a>',
    '<a\n\tb="1"\r\n  c=\'2\'  />',
    '\ufeff<a/>',
    '<order><__proto__><polluted>yes</polluted></__proto__><constructor/></order>',
    '<a b="x>y" c=\'1\'><![CDATA[<x:y/> &nope;]]></a>',
  ])('takes %s', (text) => {
    expect(() => checkWellFormedDocument(text)).not.toThrow();
  });

  it.each([
    ['<a/><b/>', 'exactly one root element'],
    ['<a>&#0;</a>', 'invalid character reference &#0;'],
    ['<a b="&#x1;"/>', 'invalid character reference &#x1;'],
    ['<a>&undefined;</a>', 'unknown entity &undefined;'],
    ['<x:a/>', 'the prefix of <x:a> is not declared'],
    ['<a><x:b/></a>', 'the prefix of <x:b> is not declared'],
    ['<a x:y="1"/>', 'the prefix of <x:y> is not declared'],
    ['<a><b xmlns:x="urn:x"/><x:c/></a>', 'the prefix of <x:c> is not declared'],
    ['<!DOCTYPE a><a/>', 'a DOCTYPE is not allowed'],
    ['<a><b></a>', 'malformed XML'],
    ['<a/>text', 'text outside the root element'],
    ['<a/>\u00a0', 'text outside the root element'],
    ['<a></a\u3000>', 'closes no open'],
    // What the parser's own check let through.
    ['<a>\u0001</a>', 'a character XML cannot carry'],
    ['<a>x\u0000</a>', 'a character XML cannot carry'],
    ['<a>x ]]> y</a>', '"]]>" in text'],
    ['<a b="x & y"/>', 'an & that begins no'],
    ['<a>x & y</a>', 'malformed XML'],
    ['<a xmlns:x=""/>', 'declared empty'],
    ['<xmlns:a/>', 'the prefix xmlns names no element'],
    ['<a:b:c xmlns:a="u"/>', 'not a name of at most one prefix'],
    ['<a/><![CDATA[x]]>', 'text outside the root element'],
    // A comment, processing instruction or CDATA opened inside an attribute's value.
    ['<a b="<!--"/><b/><c d="-->"/>', 'a < in the value of b'],
    ['<a b="<?"/><b/><c d="?>"/>', 'a < in the value of b'],
  ])('refuses %s', (text, message) => {
    expect(() => checkWellFormedDocument(text)).toThrow(message);
  });
});
