// What deployment needs to know of a PNG or JPEG document: that it is one (its signature) and its
// size in pixels as a browser shows it, which is the one page that fields are placed on.
import { imageSize } from 'image-size';
import type { PageSize } from './pdf-reader.js';

export type ImageKind = 'png' | 'jpeg';

/** Larger images are refused: a phone must be able to show the page (docs/pal-format.md). */
export const MAX_IMAGE_SIDE = 10_000;

const SIGNATURES: Record<ImageKind, number[]> = {
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  jpeg: [0xff, 0xd8, 0xff],
};

const NAMES: Record<ImageKind, string> = { png: 'a PNG image', jpeg: 'a JPEG image' };

export type ImageReading = { ok: true; page: PageSize } | { ok: false; detail: string };

/** Reads the header of an image the manifest says is `kind`. */
export function readImage(bytes: Uint8Array, kind: ImageKind): ImageReading {
  const signature = SIGNATURES[kind];
  if (bytes.length < signature.length || signature.some((b, i) => bytes[i] !== b)) {
    return { ok: false, detail: `is not ${NAMES[kind]}` };
  }
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(bytes);
  } catch {
    return { ok: false, detail: `is not ${NAMES[kind]} (its header cannot be read)` };
  }
  if (!(size.width >= 1 && size.height >= 1)) {
    return { ok: false, detail: `is not ${NAMES[kind]} (it has no size)` };
  }
  if (size.width > MAX_IMAGE_SIDE || size.height > MAX_IMAGE_SIDE) {
    return {
      ok: false,
      detail: `is ${size.width} × ${size.height} pixels; at most ${MAX_IMAGE_SIDE} on a side`,
    };
  }
  // EXIF orientations 5 to 8 turn the picture a quarter: browsers show it turned.
  const turned = (size.orientation ?? 1) >= 5;
  return {
    ok: true,
    page: turned
      ? { width: size.height, height: size.width }
      : { width: size.width, height: size.height },
  };
}
