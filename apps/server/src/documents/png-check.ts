// Whether bytes are a whole, well-formed PNG (docs/web-mode.md, "Signatures"): a drawn signature
// arrives as a data URL a browser made, but anyone can post any bytes under that prefix. The
// check walks every chunk: the 8-byte signature, IHDR first (13 bytes, a size within bounds),
// each chunk's length inside the file and its CRC right, at least one IDAT, IEND last with
// nothing after it. The pixels are not decoded: nothing here inflates attacker-chosen data.
import { crc32 } from 'node:zlib';

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export type PngCheck = { ok: true; width: number; height: number } | { ok: false; problem: string };

/** Checks `bytes` as a PNG whose sides are at most `maxSide` pixels. */
export function checkPng(bytes: Uint8Array, maxSide: number): PngCheck {
  if (bytes.length < SIGNATURE.length || SIGNATURE.some((b, i) => bytes[i] !== b))
    return { ok: false, problem: 'is not a PNG image' };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = SIGNATURE.length;
  let width = 0;
  let height = 0;
  let sawData = false;
  for (let index = 0; ; index++) {
    if (at + 12 > bytes.length) return { ok: false, problem: 'is a PNG image cut short' };
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > bytes.length)
      return { ok: false, problem: 'is a PNG image cut short' };
    const crc = view.getUint32(at + 8 + length);
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== crc)
      return { ok: false, problem: `is a damaged PNG image (the ${type} chunk's CRC is wrong)` };
    if (index === 0) {
      if (type !== 'IHDR' || length !== 13)
        return { ok: false, problem: 'is a damaged PNG image (it does not begin with IHDR)' };
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      if (width < 1 || height < 1) return { ok: false, problem: 'is a PNG image without size' };
      if (width > maxSide || height > maxSide)
        return {
          ok: false,
          problem: `is ${width} × ${height} pixels; at most ${maxSide} on a side`,
        };
    } else if (type === 'IHDR') {
      return { ok: false, problem: 'is a damaged PNG image (two IHDR chunks)' };
    }
    if (type === 'IDAT') sawData = true;
    at = end;
    if (type === 'IEND') {
      if (!sawData) return { ok: false, problem: 'is a PNG image without pixels' };
      if (at !== bytes.length)
        return { ok: false, problem: 'is a PNG image with bytes after its end' };
      return { ok: true, width, height };
    }
  }
}
