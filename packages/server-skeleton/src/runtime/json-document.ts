/**
 * C5's free JSON document: a JSON object the workflow reads as text. It is never built into typed
 * values, so only what both formats must agree on is checked here: one object, no member given
 * twice, and only text XML can carry, as the same document in XML is held to.
 */
import { DecodeError, isXmlText, refuseRepeatedMembers } from '@pal-workflow/validators';

/** The most members a refusal names; the first tell the client what is wrong. */
const MAX_NAMED = 20;

/**
 * A 400 (DecodeError) unless `text` is a JSON object whose member names and strings XML can carry,
 * with no member given twice: what `registerRoutes` holds a free JSON document (C5) to. Exported
 * for a tool that must refuse what the server refuses (the reference server's `pal run`).
 */
export function checkJsonObject(text: string): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new DecodeError([{ path: '', message: `malformed JSON: ${(e as Error).message}` }]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new DecodeError([{ path: '', message: 'expected a JSON object' }]);
  // The workflow reads the text: a member given twice would reach it as whichever it reads.
  refuseRepeatedMembers(text, value);
  // JSON.parse refuses raw control characters in strings: only an escape (`\u0000`), or a raw
  // U+FFFE, U+FFFF, brings in one that XML cannot carry, so a text without either is not walked.
  if (text.includes('\\u') || !isXmlText(text)) refuseNonXmlText(value);
}

/**
 * The same document in XML is refused (`&#0;` is no character XML has), and a workflow that echoes
 * it would fail its run or answer XML with U+FFFD in its place: a 400 naming each member.
 */
function refuseNonXmlText(value: object): void {
  interface Visit {
    value: object;
    key: string | number;
    parent: Visit | undefined;
  }
  const issues: { path: string; message: string }[] = [];
  // A stack with links to the parent, not recursion: a body may nest as deep as JSON.parse allows.
  const stack: Visit[] = [{ value, key: '', parent: undefined }];
  while (stack.length > 0 && issues.length <= MAX_NAMED) {
    const visit = stack.pop()!;
    const array = Array.isArray(visit.value);
    const children: Visit[] = [];
    for (const [key, child] of Object.entries(visit.value)) {
      if (!array && !isXmlText(key)) {
        issues.push({
          path: pathOf(visit),
          message: 'a member name contains a character that XML cannot carry',
        });
        continue;
      }
      const at = { value: visit.value, key: array ? Number(key) : key, parent: visit };
      if (typeof child === 'string' && !isXmlText(child))
        issues.push({ path: pathOf(at), message: 'contains a character that XML cannot carry' });
      else if (typeof child === 'object' && child !== null) children.push({ ...at, value: child });
    }
    // Last first on the stack, so that the members of an object are walked in their order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  if (issues.length > 0)
    throw new DecodeError(issues.slice(0, MAX_NAMED), issues.length > MAX_NAMED ? 'some' : 0);

  function pathOf(visit: Visit): string {
    let path = '';
    for (let v: Visit | undefined = visit; v?.parent; v = v.parent)
      path = (typeof v.key === 'number' ? `[${v.key}]` : `.${v.key}`) + path;
    return path.replace(/^\./, '');
  }
}
