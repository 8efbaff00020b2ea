// Right-to-left text (Hebrew, Arabic) in the completed PDF, set by the Unicode Bidirectional
// Algorithm (UAX #9, bidi-js). pdf-lib hands each line it draws, of a page or of a form field's
// appearance, to fontkit, which shapes it and, when the line's first letter is of a right-to-left
// script, reverses the whole line: "רחוב הרצל 12345" came out with 54321, a Latin word or
// "12.50 CHF" backwards. So a DejaVu font's text is encoded run by run instead: the line's
// embedding levels are resolved, its runs put in display order (rule L2), and each run laid out
// by fontkit in its own direction, a right-to-left one with its brackets mirrored (rule L4) and
// still shaped (Arabic joining forms) in its logical order.
import { createRequire } from 'node:module';
import type { Bidi } from 'bidi-js';
import { PDFHexString, type PDFFont } from 'pdf-lib';

// The package's CommonJS file is its factory (module.exports); its types declare it as an ES
// default export, which TypeScript under NodeNext would read as `.default`.
const bidi = (createRequire(import.meta.url)('bidi-js') as () => Bidi)();

/**
 * Characters that can make a line right-to-left: Hebrew, Arabic and the other right-to-left
 * blocks, their presentation forms, and the explicit marks and right-to-left controls. A line
 * without any is left to right as it stands, and is encoded as before.
 */
const MAYBE_RTL =
  /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u200e\u200f\u202b\u202e\u2067\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;

export type Direction = 'ltr' | 'rtl';

/** The invisible marks (LRM, RLM, ALM): strong characters that set a line's direction, never drawn. */
const MARKS = /[\u200e\u200f\u061c]/g;

/**
 * The direction of a paragraph: its first strong character's (rules P2, P3), as a browser's
 * `dir="auto"` takes it; left to right when it has none.
 */
export function paragraphDirection(paragraph: string): Direction {
  if (!MAYBE_RTL.test(paragraph)) return 'ltr';
  return bidi.getEmbeddingLevels(paragraph).paragraphs[0]!.level & 1 ? 'rtl' : 'ltr';
}

/**
 * A line broken out of a paragraph, marked to keep the paragraph's direction: each line is laid
 * out alone, and one of a Hebrew paragraph that begins with a Latin word or a number would
 * otherwise be left to right, its runs in the other order. A leading RLM or LRM (a strong
 * character of no width, left out when the line is drawn) is the paragraph's direction.
 */
export function inParagraphDirection(line: string, direction: Direction): string {
  if (!line || paragraphDirection(line) === direction) return line;
  return `${direction === 'rtl' ? '\u200f' : '\u200e'}${line}`;
}

/** A piece of a line in display order, left to right: its text in logical order and its direction. */
export interface VisualRun {
  text: string;
  direction: Direction;
}

/**
 * The runs of one line (no line breaks) in the order they are shown, left to right. Each run's
 * text stays in logical order; a right-to-left run is shown reversed, with its mirrored characters
 * (brackets) already swapped; the invisible marks are left out. The paragraph direction is the
 * line's first strong character's (paragraphDirection), a mark's when inParagraphDirection set one.
 */
export function visualRuns(line: string): VisualRun[] {
  if (!MAYBE_RTL.test(line)) return line ? [{ text: line, direction: 'ltr' }] : [];
  const embedding = bidi.getEmbeddingLevels(line);
  const { levels } = embedding;
  // Display order of the UTF-16 units (L1's trailing whitespace and L2's reversals): a
  // right-to-left run shows as descending indices, a left-to-right one as ascending.
  const order = bidi.getReorderedIndices(line, embedding);
  const mirrored = bidi.getMirroredCharactersMap(line, levels);
  const runs: VisualRun[] = [];
  let i = 0;
  while (i < order.length) {
    const first = order[i]!;
    let last = first;
    let step: number;
    const next = order[i + 1];
    if (next !== undefined && Math.abs(next - first) === 1 && levels[next] === levels[first])
      step = next - first;
    else step = levels[first]! & 1 ? -1 : 1;
    let j = i + 1;
    while (j < order.length && order[j] === last + step && levels[order[j]!] === levels[first]) {
      last = order[j]!;
      j++;
    }
    const [from, to] = step > 0 ? [first, last] : [last, first];
    let text = '';
    for (let k = from; k <= to; k++) text += mirrored.get(k) ?? line[k];
    text = text.replace(MARKS, '');
    if (text) runs.push({ text, direction: step > 0 ? 'ltr' : 'rtl' });
    i = j;
  }
  return runs;
}

/** fontkit's layout, as pdf-lib's embedder of a TrueType font calls it. */
type Layout = (text: string, features?: unknown, script?: string, language?: string) => unknown;
interface FontkitFont {
  layout: Layout;
}
interface Embedder {
  font?: FontkitFont;
  encodeText(text: string): PDFHexString;
  widthOfTextAtSize(text: string, size: number): number;
}

/**
 * Runs `encode` with fontkit laying text out in `direction`, whatever script the text's first
 * letter is of: pdf-lib does not pass a direction, and fontkit would take the script's own.
 */
function inDirection<T>(font: FontkitFont, direction: Direction, encode: () => T): T {
  const own = Object.prototype.hasOwnProperty.call(font, 'layout');
  const layout = font.layout;
  font.layout = function (this: FontkitFont, text, features, script, language) {
    return (layout as (...args: unknown[]) => unknown).call(
      this,
      text,
      features,
      script,
      language,
      direction,
    );
  };
  try {
    return encode();
  } finally {
    if (own) font.layout = layout;
    else delete (font as Partial<FontkitFont>).layout;
  }
}

const bidiAware = new WeakSet<object>();

/**
 * Makes an embedded (DejaVu) font write right-to-left text in display order: every text pdf-lib
 * encodes with it, a line of a page or of a field's appearance, is encoded run by run as
 * visualRuns orders them, and measured the same way (a run's shaping may change its width). Text
 * without right-to-left characters is encoded and measured as before. The standard fonts write
 * Windows-1252 only, which has none, and are left alone.
 */
export function setBidiAware(font: PDFFont): void {
  // pdf-lib's PDFFont marks itself used and asks its embedder; the embedder is what lays out.
  const embedder = (font as unknown as { embedder: Embedder }).embedder;
  const fontkitFont = embedder.font;
  if (!fontkitFont || bidiAware.has(embedder)) return;
  bidiAware.add(embedder);
  const encode = embedder.encodeText.bind(embedder);
  const measure = embedder.widthOfTextAtSize.bind(embedder);
  embedder.encodeText = (text) => {
    if (!MAYBE_RTL.test(text)) return encode(text);
    const hex = visualRuns(text).map((run) =>
      inDirection(fontkitFont, run.direction, () => encode(run.text)).asString(),
    );
    return PDFHexString.of(hex.join(''));
  };
  embedder.widthOfTextAtSize = (text, size) => {
    if (!MAYBE_RTL.test(text)) return measure(text, size);
    let width = 0;
    for (const run of visualRuns(text))
      width += inDirection(fontkitFont, run.direction, () => measure(run.text, size));
    return width;
  };
}
