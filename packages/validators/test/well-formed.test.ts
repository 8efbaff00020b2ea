/** C5's document taken as it is: well-formed XML, nothing more asked of it. */
import { describe, expect, it } from 'vitest';
import { checkWellFormedDocument } from '../src/index.js';

describe('checkWellFormedDocument', () => {
  it.each([
    '<a/>',
    '<?xml version="1.0" encoding="UTF-8"?>\n<a>text</a>\n',
    '<a xmlns:x="urn:x"><x:b x:c="1">&amp;&lt;&#x41;&#13;&#128512;</x:b><!-- note --></a>',
    '<x:a xmlns:x="urn:x"><x:b/></x:a>',
    '<a xml:lang="en" xmlns="urn:default"><b/></a>',
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
  ])('refuses %s', (text, message) => {
    expect(() => checkWellFormedDocument(text)).toThrow(message);
  });
});
