import { describe, expect, it } from 'vitest';
import { memberPath, walkJson } from './json-walk.js';

describe('walkJson', () => {
  const paths = (value: unknown, visit?: (path: string) => 'stop' | 'skip' | void) => {
    const met: string[] = [];
    walkJson(value, (member) => {
      met.push(memberPath(member));
      return visit?.(memberPath(member));
    });
    return met;
  };

  it('meets every member, each object before what it holds, with paths as messages write them', () => {
    expect(paths({ a: { b: [1, { c: 'x' }] }, d: 2 })).toEqual([
      'a',
      'd',
      'a.b',
      'a.b[0]',
      'a.b[1]',
      'a.b[1].c',
    ]);
    expect(paths('text')).toEqual([]);
  });

  it('stops, and skips what a member holds, when asked', () => {
    expect(paths({ a: { b: 1 }, c: { d: 2 } }, (p) => (p === 'a' ? 'skip' : undefined))).toEqual([
      'a',
      'c',
      'c.d',
    ]);
    expect(paths({ a: 1, b: 2, c: 3 }, (p) => (p === 'b' ? 'stop' : undefined))).toEqual([
      'a',
      'b',
    ]);
  });

  it('follows a value nested deeper than a recursive walk could', () => {
    const deep = JSON.parse(`${'['.repeat(20_000)}${']'.repeat(20_000)}`) as unknown;
    expect(paths(deep)).toHaveLength(19_999);
  });
});
