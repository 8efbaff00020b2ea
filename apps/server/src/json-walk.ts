// A walk over a parsed JSON value, for the checks that say where in it a problem is (a workflow's
// result, a pal's manifest): without recursion, since a value may nest as deep as JSON.parse
// allows, and with paths as the messages write them (`a.b[0].c`).

/** A member of an object, or an item of an array, met on the walk. */
export interface JsonMember {
  /** The path of the object or array that holds it ('' for the value itself). */
  parentPath: string;
  key: string;
  value: unknown;
  inArray: boolean;
}

/** The member's own path: `parent.key`, or `parent[index]` in an array. */
export function memberPath({ parentPath, key, inArray }: JsonMember): string {
  if (inArray) return `${parentPath}[${key}]`;
  return parentPath ? `${parentPath}.${key}` : key;
}

/**
 * Meets every member of every object and array in `value`, each object's in their order and
 * before what they hold. `visit` answers 'stop' to end the walk, 'skip' to leave the member's
 * own members out.
 */
export function walkJson(value: unknown, visit: (member: JsonMember) => 'stop' | 'skip' | void) {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: at, path } = stack.pop()!;
    if (typeof at !== 'object' || at === null) continue;
    const inArray = Array.isArray(at);
    const inner: { value: unknown; path: string }[] = [];
    for (const [key, child] of Object.entries(at)) {
      const member = { parentPath: path, key, value: child, inArray };
      const answer = visit(member);
      if (answer === 'stop') return;
      if (answer !== 'skip' && typeof child === 'object' && child !== null)
        inner.push({ value: child, path: memberPath(member) });
    }
    // Last first on the stack, so that they are met in their order.
    for (let i = inner.length - 1; i >= 0; i--) stack.push(inner[i]!);
  }
}
