// Text cut to a bound, saying so: a run's thrown error (workflows/limits.ts) and the messages a
// session keeps of a run's answer (domain/sessions.ts) are cut the same way.

/** The first `max` UTF-16 units of `text`, without half of a surrogate pair at the end. */
export function wholeSlice(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * `text` cut to `max` characters, saying so: `…` after a name, `… (cut to max of n characters)`
 * after a message. `length` is the whole text's length when only its start was read.
 */
export function cut(
  text: string,
  max: number,
  style: 'name' | 'message',
  length = text.length,
): string {
  if (length <= max) return text;
  const start = wholeSlice(text, max);
  return style === 'name' ? `${start}…` : `${start}… (cut to ${max} of ${length} characters)`;
}
