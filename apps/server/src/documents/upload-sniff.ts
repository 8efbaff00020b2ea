// What an uploaded file is, told by its bytes (docs/pal-format.md, "uploads"), never by the name
// or the type the browser gave: a PNG whose every chunk is whole (./png-check.ts), a JPEG whose
// header an image reader can read, or a PDF that begins with its header and ends with its
// end-of-file marker. Nothing here renders or decodes the file.
import { MAX_IMAGE_SIDE, readImage } from './image-reader.js';
import { checkPng } from './png-check.js';

export type UploadKind = 'application/pdf' | 'image/png' | 'image/jpeg';

export type Sniffed = { ok: true; contentType: UploadKind } | { ok: false; problem: string };

const NAMES: Record<UploadKind, string> = {
  'application/pdf': 'a PDF',
  'image/png': 'a PNG image',
  'image/jpeg': 'a JPEG image',
};

/** "a PDF, a PNG image, or a JPEG image". */
const ALTERNATIVES = new Intl.ListFormat('en', { type: 'disjunction' });

/** Which of `accept` the bytes are, or why none. */
export function sniffUpload(bytes: Uint8Array, accept: readonly UploadKind[]): Sniffed {
  const head = Buffer.from(bytes.subarray(0, 8)).toString('latin1');
  let kind: UploadKind | undefined;
  let problem: string | undefined;
  if (head.startsWith('\x89PNG')) {
    kind = 'image/png';
    const png = checkPng(bytes, MAX_IMAGE_SIDE);
    if (!png.ok) problem = png.problem;
  } else if (head.startsWith('\xff\xd8\xff')) {
    kind = 'image/jpeg';
    const jpeg = readImage(bytes, 'jpeg');
    if (!jpeg.ok) problem = jpeg.detail;
  } else if (/^%PDF-[12]\.\d/.test(head)) {
    kind = 'application/pdf';
    const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 1024))).toString('latin1');
    if (!tail.includes('%%EOF')) problem = 'is a PDF cut short (it has no end-of-file marker)';
  }
  const wanted = ALTERNATIVES.format(accept.map((a) => NAMES[a]));
  if (kind === undefined || !accept.includes(kind))
    return { ok: false, problem: `is not ${wanted}` };
  if (problem) return { ok: false, problem };
  return { ok: true, contentType: kind };
}
