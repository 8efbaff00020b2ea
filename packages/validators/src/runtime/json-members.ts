/**
 * Members given twice in one JSON object. JSON.parse keeps the last and says nothing, so
 * `{"q":"x","q":"y"}` reached a workflow as `y` while the same request in XML is refused (DESIGN:
 * both formats carry the same values). The hot path pays one scan of the text for its members and
 * one count of the parsed value's; only when they differ is the text parsed again, by
 * jsonc-parser, to name the member.
 */
import jsonc from 'jsonc-parser';
import { DecodeError, IssueList, joinPath } from './decode-error.js';

/** A 400 naming each member given more than once; `value` is what JSON.parse made of `text`. */
export function refuseRepeatedMembers(text: string, value: unknown, root = ''): void {
  if (membersInText(text) === membersInValue(value)) return;
  const issues = new IssueList();
  try {
    namedRepeats(text, root, issues);
  } catch (error) {
    // jsonc-parser descends by recursion, and JSON.parse reads deeper: say what, if not where.
    if (!(error instanceof RangeError)) throw error;
    throw new DecodeError([{ path: root, message: 'a member is given more than once' }]);
  }
  if (issues.length > 0) throw new DecodeError(issues);
}

function namedRepeats(text: string, root: string, issues: IssueList): void {
  const objects: Set<string>[] = [];
  jsonc.visit(
    text,
    {
      onObjectBegin: () => void objects.push(new Set()),
      onObjectEnd: () => void objects.pop(),
      onObjectProperty: (name, _offset, _length, _line, _column, pathOf) => {
        const names = objects[objects.length - 1]!;
        if (!names.has(name)) names.add(name);
        else
          issues.push({
            path: joinPath(pathOf(), root),
            message: `member "${name.slice(0, 64)}" given more than once`,
          });
      },
    },
    { disallowComments: true },
  );
}

const MEMBER_OR_STRING = /[:"]/g;

/** The colons outside strings: one per member of every object. */
function membersInText(text: string): number {
  const special = new RegExp(MEMBER_OR_STRING);
  let members = 0;
  for (let match = special.exec(text); match; match = special.exec(text)) {
    if (match[0] === ':') {
      members++;
      continue;
    }
    let end = match.index;
    do end = text.indexOf('"', end + 1);
    while (end !== -1 && escaped(text, end));
    if (end === -1) break;
    special.lastIndex = end + 1;
  }
  return members;
}

/** Whether the character at `at` follows an odd number of backslashes. */
function escaped(text: string, at: number): boolean {
  let slashes = 0;
  while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
  return slashes % 2 === 1;
}

/** The members of every object in a parsed value, without recursion (it may nest deep). */
function membersInValue(value: unknown): number {
  let members = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const at = stack.pop();
    if (typeof at !== 'object' || at === null) continue;
    if (Array.isArray(at)) {
      for (const item of at) if (typeof item === 'object' && item !== null) stack.push(item);
      continue;
    }
    for (const key in at) {
      members++;
      const child = (at as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
  }
  return members;
}
