import { describe, expect, it } from 'vitest';
import { png as tinyPng } from '../../test/documents.js';
import { checkPng } from './png-check.js';

describe('checkPng', () => {
  it('accepts a well-formed PNG and reads its size', () => {
    expect(checkPng(tinyPng(300, 100), 4000)).toEqual({ ok: true, width: 300, height: 100 });
  });

  it('refuses bytes that only begin like a PNG', () => {
    const prefix = tinyPng(1, 1).subarray(0, 8);
    expect(checkPng(Buffer.concat([prefix, Buffer.from('<svg onload=alert(1)>')]), 4000)).toEqual({
      ok: false,
      problem: 'is a PNG image cut short',
    });
    expect(checkPng(Buffer.from('GIF89a....'), 4000).ok).toBe(false);
  });

  it('refuses a damaged chunk, bytes after the end, no pixels and a size past the cap', () => {
    const png = tinyPng(1, 1);
    const damaged = Buffer.from(png);
    damaged[20] ^= 0xff;
    expect(checkPng(damaged, 4000)).toMatchObject({ ok: false });
    expect(checkPng(Buffer.concat([png, Buffer.from('x')]), 4000)).toEqual({
      ok: false,
      problem: 'is a PNG image with bytes after its end',
    });
    const noData = Buffer.concat([png.subarray(0, 33), png.subarray(png.length - 12)]);
    expect(checkPng(noData, 4000)).toEqual({ ok: false, problem: 'is a PNG image without pixels' });
    expect(checkPng(tinyPng(5000, 10), 4000)).toEqual({
      ok: false,
      problem: 'is 5000 × 10 pixels; at most 4000 on a side',
    });
  });
});
