import { describe, expect, it } from 'vitest';
import { jpeg, png } from '../../test/documents.js';
import { MAX_IMAGE_SIDE, readImage } from './image-reader.js';

describe('readImage', () => {
  it('reads the size of a PNG and of a JPEG, in pixels', () => {
    expect(readImage(png(300, 200), 'png')).toEqual({
      ok: true,
      page: { width: 300, height: 200 },
    });
    expect(readImage(jpeg(640, 480), 'jpeg')).toEqual({
      ok: true,
      page: { width: 640, height: 480 },
    });
  });

  it('measures a JPEG as a browser shows it: EXIF orientations 5 to 8 turn it a quarter', () => {
    expect(readImage(jpeg(640, 480, 1), 'jpeg')).toMatchObject({
      page: { width: 640, height: 480 },
    });
    expect(readImage(jpeg(640, 480, 3), 'jpeg')).toMatchObject({
      page: { width: 640, height: 480 },
    });
    expect(readImage(jpeg(640, 480, 6), 'jpeg')).toMatchObject({
      page: { width: 480, height: 640 },
    });
    expect(readImage(jpeg(640, 480, 8), 'jpeg')).toMatchObject({
      page: { width: 480, height: 640 },
    });
  });

  it('refuses a file that is not the image its name says', () => {
    expect(readImage(jpeg(10, 10), 'png')).toEqual({ ok: false, detail: 'is not a PNG image' });
    expect(readImage(png(10, 10), 'jpeg')).toEqual({ ok: false, detail: 'is not a JPEG image' });
    expect(readImage(new TextEncoder().encode('GIF89a…'), 'png')).toMatchObject({ ok: false });
    expect(readImage(new Uint8Array(0), 'jpeg')).toMatchObject({ ok: false });
  });

  it('refuses an image whose header is cut off or says it has no size', () => {
    expect(readImage(png(10, 10).subarray(0, 12), 'png')).toEqual({
      ok: false,
      detail: 'is not a PNG image (its header cannot be read)',
    });
    // SOI and then nothing that gives a size.
    expect(readImage(Buffer.from([0xff, 0xd8, 0xff, 0xd9]), 'jpeg')).toMatchObject({ ok: false });
    expect(readImage(png(0, 10), 'png')).toEqual({
      ok: false,
      detail: 'is not a PNG image (it has no size)',
    });
  });

  it(`refuses an image larger than ${MAX_IMAGE_SIDE} pixels on a side`, () => {
    expect(readImage(jpeg(MAX_IMAGE_SIDE + 1, 10), 'jpeg')).toEqual({
      ok: false,
      detail: `is ${MAX_IMAGE_SIDE + 1} × 10 pixels; at most ${MAX_IMAGE_SIDE} on a side`,
    });
    expect(readImage(jpeg(MAX_IMAGE_SIDE, MAX_IMAGE_SIDE), 'jpeg')).toMatchObject({ ok: true });
  });
});
