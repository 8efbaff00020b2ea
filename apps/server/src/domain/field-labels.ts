// What a person reads beside a field on a session page: the author's label (the manifest's
// `label`, else the PDF field's alternate name), else the field's id made readable. The pal's
// author wrote the first two for people; an id is a name for code.

/** The longest label kept, in characters as a person counts them (grapheme clusters). */
export const FIELD_LABEL_MAX = 200;

/** Line breaks and other control characters: a label is one line. */
const BREAKS = /[\p{Cc}\u2028\u2029]/gu;
/**
 * Invisible characters that could make a label read otherwise than it is written: bidirectional
 * marks, embeddings, overrides and isolates, the soft hyphen, and a surrogate without its pair.
 * Joiners (U+200C, U+200D: Persian, Hindi, emoji) and tag characters (flags) are kept.
 */
const HIDDEN =
  /[\u00AD\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * `text` as a label shows it: hidden characters dropped, control characters as spaces, white space
 * collapsed and trimmed; undefined when nothing is left.
 */
export function readableLabel(text: string): string | undefined {
  const cleaned = text.replace(HIDDEN, '').replace(BREAKS, ' ').replace(/\s+/g, ' ').trim();
  return cleaned === '' ? undefined : cleaned;
}

/** `label`'s first FIELD_LABEL_MAX characters, none split (an accent stays with its letter). */
export function cutLabel(label: string): string {
  let end = 0;
  let count = 0;
  for (const { segment } of graphemes.segment(label)) {
    if (++count > FIELD_LABEL_MAX) return label.slice(0, end).trim();
    end += segment.length;
  }
  return label;
}

/** Why a manifest's `label` cannot be one, or undefined when it can. */
export function labelProblem(text: string): string | undefined {
  const readable = readableLabel(text);
  if (readable === undefined) return 'must hold readable text';
  if (cutLabel(readable) !== readable) return `must be at most ${FIELD_LABEL_MAX} characters`;
  return undefined;
}

/**
 * A field's id made readable (`employee_name` and `employeeName` read "Employee name";
 * `claim.total` reads "Claim total"), for a field whose author gave no label.
 */
export function labelFromId(id: string): string {
  const words = id
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s._-]+/)
    .filter((w) => w !== '')
    .map((w) => (/^[A-Z0-9]{2,}$/.test(w) ? w : w.toLowerCase()));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The label of field `id` among a document's `labels` (PalDocument), else one made from its id. */
export function fieldLabel(
  labels: Readonly<Record<string, string>> | undefined,
  id: string,
): string {
  return (labels && Object.hasOwn(labels, id) ? labels[id] : undefined) ?? labelFromId(id);
}
