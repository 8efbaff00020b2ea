import { describe, expect, it } from 'vitest';
import { negotiate, negotiateMediaType } from '../index.js';

describe('negotiate', () => {
  it.each([
    { accept: undefined, simple: false, want: 'xml' },
    { accept: '', simple: true, want: 'xml' },
    // An empty list is an empty Accept.
    { accept: ',', simple: false, want: 'xml' },
    { accept: ' , ,', simple: true, want: 'xml' },
    { accept: '*/*', simple: false, want: 'xml' },
    { accept: 'application/json', simple: false, want: 'json' },
    { accept: 'text/xml', simple: false, want: 'xml' },
    { accept: 'text/xml; q=0.5, text/html', simple: false, want: 'xml' },
    // text/* asks for text: a structured answer is none (406), a simple one is text/plain.
    { accept: 'text/*', simple: false, want: undefined },
    { accept: 'text/*', simple: true, want: 'text' },
    { accept: 'text/*, application/json;q=0.5', simple: false, want: 'json' },
    { accept: 'text/plain', simple: true, want: 'text' },
    { accept: 'text/plain', simple: false, want: undefined },
    { accept: 'text/html', simple: true, want: undefined },
    { accept: 'application/xml;q=0.2, application/json;q=0.9', simple: false, want: 'json' },
    { accept: 'text/plain;q=1, application/json;q=0.1', simple: false, want: 'json' },
    { accept: 'text/plain;q=1, application/json;q=0.1', simple: true, want: 'text' },
    { accept: 'application/*', simple: false, want: 'xml' },
    { accept: 'application/json;q=0', simple: false, want: undefined },
    // Parameters other than q do not defeat negotiation: these are the types the service sends.
    { accept: 'application/json; charset=utf-8', simple: false, want: 'json' },
    { accept: 'application/xml; charset=utf-8', simple: false, want: 'xml' },
    { accept: 'text/plain; charset=utf-8', simple: true, want: 'text' },
    { accept: 'text/plain; charset=utf-8', simple: false, want: undefined },
    {
      accept: 'application/json; charset=utf-8; q=0.5, application/xml; q=0.4',
      simple: false,
      want: 'json',
    },
    { accept: 'application/json; charset=utf-8; q=0', simple: false, want: undefined },
  ])('Accept $accept (simple: $simple) → $want', ({ accept, simple, want }) => {
    expect(negotiate(accept, simple)).toBe(want);
  });

  // The answer is labelled as the client asked: text/xml for one that prefers it, never a type
  // the client refused.
  it.each([
    { accept: undefined, want: 'application/xml' },
    { accept: '*/*', want: 'application/xml' },
    { accept: 'text/xml', want: 'text/xml' },
    { accept: 'application/xml;q=0, text/xml', want: 'text/xml' },
    { accept: 'text/xml;q=0.5, application/xml', want: 'application/xml' },
    { accept: 'application/json', want: 'application/json' },
    { accept: 'application/xml;q=0, */*', want: 'application/json' },
    { accept: 'text/html', want: undefined },
  ])('Accept $accept → Content-Type $want', ({ accept, want }) => {
    expect(negotiateMediaType(accept, false)).toBe(want);
  });
});
