// Real PNG files for tests and benches, written byte by byte (8-bit greyscale, one IDAT), so that
// each picture is exactly what its maker says: white, inked, or incompressible noise.
import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A width × height greyscale PNG whose pixel (x, y) is `shade(x, y)` (0 black, 255 white).
 * `level` is zlib's compression level (0: stored, so the file is about width × height bytes).
 */
export function greyPng(
  width: number,
  height: number,
  shade: (x: number, y: number) => number = () => 0xff,
  level?: number,
): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // bit depth 8, greyscale, deflate, no filter method, no interlace
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) {
    rows[y * (width + 1)] = 0; // filter type None
    for (let x = 0; x < width; x++) rows[y * (width + 1) + 1 + x] = shade(x, y);
  }
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows, level === undefined ? {} : { level })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
