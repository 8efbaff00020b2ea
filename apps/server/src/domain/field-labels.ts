// What a person reads beside a field on a session page: the author's label (the manifest's
// `label`, else the PDF field's alternate name), else the field's id made readable. The pal's
// author wrote the first two for people; an id is a name for code.

/** The longest label kept; a longer one is cut (a PDF's) or refused (a manifest's). */
export const FIELD_LABEL_MAX = 200;

/**
 * A label as a person should read it, or undefined when nothing readable is left: control and
 * format characters (bidirectional overrides among them) and unpaired surrogates dropped, white
 * space collapsed, cut at FIELD_LABEL_MAX characters without splitting a character.
 */
export function readableLabel(text: string): string | undefined {
  const cleaned = text
    .replace(/[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (cleaned === '') return undefined;
  const cut = Array.from(cleaned).slice(0, FIELD_LABEL_MAX).join('').trim();
  return cut;
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
