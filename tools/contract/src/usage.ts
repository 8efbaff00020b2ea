/**
 * Which way each XSD type travels: in requests (bodies, search headers), in responses, or both.
 * A required member that becomes optional breaks readers of responses but not writers of
 * requests, so some rules depend on it. Types no operation reaches count as both: the packages
 * export them all.
 */
import type { OperationModel, SchemaModel, TypeModel, TypeRef } from '@pal-workflow/codegen';

export type Direction = 'request' | 'response';
export type Usage = Map<string, Set<Direction>>;

function referenced(t: TypeModel): TypeRef[] {
  switch (t.kind) {
    case 'object':
      return t.members.map((m) => m.type);
    case 'map':
      return [t.value];
    case 'array':
      return [t.item];
    case 'enum':
      return [];
  }
}

function reach(model: SchemaModel, start: string[]): Set<string> {
  const byName = new Map(model.types.map((t) => [t.name, t]));
  const seen = new Set<string>();
  const visit = (name: string) => {
    const t = byName.get(name);
    if (!t || seen.has(name)) return;
    seen.add(name);
    if (t.kind === 'object' && t.base) visit(t.base);
    for (const ref of referenced(t)) if (ref.kind !== 'builtin') visit(ref.name);
  };
  start.forEach(visit);
  return seen;
}

export function usageOf(model: SchemaModel, operations: OperationModel[]): Usage {
  const requests = operations.flatMap((op) => [
    ...(op.body?.kind === 'typed' ? [op.body.type] : []),
    ...(op.search ? [op.search.type] : []),
  ]);
  const responses = operations.flatMap((op) =>
    op.response.kind === 'object'
      ? [op.response.type]
      : op.response.kind === 'list'
        ? [op.response.itemType]
        : [],
  );
  // Every error answers an errorResult.
  const errorRoot = model.roots.find((r) => r.name === 'errorResult');
  if (errorRoot && errorRoot.type.kind !== 'builtin') responses.push(errorRoot.type.name);

  const inRequests = reach(model, requests);
  const inResponses = reach(model, responses);
  const usage: Usage = new Map();
  for (const t of model.types) {
    const ways = new Set<Direction>();
    if (inRequests.has(t.name)) ways.add('request');
    if (inResponses.has(t.name)) ways.add('response');
    usage.set(t.name, ways.size ? ways : new Set(['request', 'response']));
  }
  return usage;
}

/** Both sides' usage together: a type that travels a way in either version travels it. */
export function mergeUsage(a: Usage, b: Usage): Usage {
  const out: Usage = new Map();
  for (const [name, ways] of [...a, ...b])
    out.set(name, new Set([...(out.get(name) ?? []), ...ways]));
  return out;
}
