/**
 * Changes of the XSD half of the contract, read from the generator's schema model: files and
 * namespaces, root elements, types, members (optionality, list-ness, nillability, type),
 * enumerations, maps and list wrappers. The rules are the bump table of docs/regenerating.md.
 */
import type { MemberModel, SchemaModel, TypeModel, TypeRef } from '@pal-workflow/codegen';
import type { Change, ChangeBump } from './change.js';
import type { Usage } from './usage.js';

export function refName(ref: TypeRef): string {
  return ref.kind === 'builtin' ? `xs:${ref.name}` : ref.name;
}

function sameRef(a: TypeRef, b: TypeRef): boolean {
  return refName(a) === refName(b);
}

function describe(m: MemberModel): string {
  return [
    refName(m.type),
    m.optional ? 'optional' : 'required',
    ...(m.list ? ['list'] : []),
    ...(m.nillable ? ['nillable'] : []),
    ...(m.maxLength !== undefined ? [`maxLength ${m.maxLength}`] : []),
  ].join(', ');
}

export function diffSchema(before: SchemaModel, after: SchemaModel, usage: Usage): Change[] {
  const changes: Change[] = [];
  const add = (bump: ChangeBump, kind: string, path: string, reason: string) =>
    changes.push({ bump, kind, path, reason });

  // Schema files: namespaces are on the wire; the prefix and version attribute are not
  // (decoders accept any prefix bound to the namespace).
  const filesBefore = new Map(before.files.map((f) => [f.file, f]));
  const filesAfter = new Map(after.files.map((f) => [f.file, f]));
  for (const [file, b] of filesBefore) {
    const a = filesAfter.get(file);
    if (!a) continue;
    if (a.namespace !== b.namespace)
      add(
        'major',
        'namespace-changed',
        file,
        `target namespace changed from ${b.namespace} to ${a.namespace}: every root element moves`,
      );
    if (a.prefix !== b.prefix)
      add(
        'patch',
        'prefix-changed',
        file,
        `root prefix changed from ${b.prefix}: to ${a.prefix}: (any prefix bound to the namespace is read)`,
      );
    if (a.version !== b.version)
      add('patch', 'schema-version-changed', file, `version attribute ${b.version} → ${a.version}`);
  }

  // Root elements.
  const rootKey = (r: { name: string; namespace: string }) => `${r.namespace} ${r.name}`;
  const rootsAfter = new Map(after.roots.map((r) => [rootKey(r), r]));
  const rootsBefore = new Map(before.roots.map((r) => [rootKey(r), r]));
  const fileOf = (model: SchemaModel, namespace: string) =>
    model.files.find((f) => f.namespace === namespace)?.file ?? namespace;
  for (const [key, b] of rootsBefore) {
    const a = rootsAfter.get(key);
    const path = `${fileOf(before, b.namespace)}#element ${b.name}`;
    if (!a)
      add(
        'major',
        'root-removed',
        path,
        `root element ${b.name} removed (or renamed, or moved to another namespace)`,
      );
    else if (!sameRef(a.type, b.type))
      add(
        'major',
        'root-type-changed',
        path,
        `root element ${b.name} changed type from ${refName(b.type)} to ${refName(a.type)}`,
      );
  }
  for (const [key, a] of rootsAfter)
    if (!rootsBefore.has(key))
      add(
        'minor',
        'root-added',
        `${fileOf(after, a.namespace)}#element ${a.name}`,
        `new root element ${a.name}`,
      );

  // Types.
  const typesAfter = new Map(after.types.map((t) => [t.name, t]));
  const typesBefore = new Map(before.types.map((t) => [t.name, t]));
  for (const [name, b] of typesBefore) {
    const a = typesAfter.get(name);
    const path = `${b.source}#${name}`;
    if (!a) {
      add('major', 'type-removed', path, `type ${name} removed (or renamed)`);
      continue;
    }
    diffType(b, a, usage.get(name) ?? new Set(['request', 'response']), add);
  }
  for (const [name, a] of typesAfter)
    if (!typesBefore.has(name))
      add('minor', 'type-added', `${a.source}#${name}`, `new type ${name}`);

  return changes;
}

type Add = (bump: ChangeBump, kind: string, path: string, reason: string) => void;

function diffType(b: TypeModel, a: TypeModel, ways: Set<'request' | 'response'>, add: Add): void {
  const path = `${a.source}#${a.name}`;
  if (b.namespace !== a.namespace)
    add(
      'major',
      'type-namespace-changed',
      path,
      `namespace changed from ${b.namespace} to ${a.namespace}`,
    );
  if ((b.doc ?? '') !== (a.doc ?? ''))
    add('patch', 'documentation-changed', path, 'documentation changed');
  if (b.kind !== a.kind) {
    add(
      'major',
      'type-kind-changed',
      path,
      `${b.kind} type became ${a.kind === 'array' ? 'a list wrapper' : `a ${a.kind}`}: its wire shape changes`,
    );
    return;
  }
  if (b.kind === 'enum' && a.kind === 'enum') {
    for (const v of b.values)
      if (!a.values.includes(v))
        add(
          'major',
          'enum-value-removed',
          `${path}.${v}`,
          `enumeration value ${v} removed: documents using it no longer validate`,
        );
    for (const v of a.values)
      if (!b.values.includes(v))
        add(
          'minor',
          'enum-value-added',
          `${path}.${v}`,
          `new enumeration value ${v} (consumers that switch exhaustively should handle it)`,
        );
    return;
  }
  if (b.kind === 'map' && a.kind === 'map') {
    if (!sameRef(b.value, a.value))
      add(
        'major',
        'map-value-changed',
        path,
        `map value type changed from ${refName(b.value)} to ${refName(a.value)}`,
      );
    return;
  }
  if (b.kind === 'array' && a.kind === 'array') {
    if (b.itemElement !== a.itemElement)
      add(
        'major',
        'list-item-element-changed',
        path,
        `list wrapper's item element renamed from <${b.itemElement}> to <${a.itemElement}>`,
      );
    if (!sameRef(b.item, a.item))
      add(
        'major',
        'list-item-type-changed',
        path,
        `list item type changed from ${refName(b.item)} to ${refName(a.item)}`,
      );
    return;
  }
  if (b.kind !== 'object' || a.kind !== 'object') return;
  if ((b.base ?? '') !== (a.base ?? ''))
    add(
      'major',
      'base-changed',
      path,
      `base type changed from ${b.base ?? '(none)'} to ${a.base ?? '(none)'}`,
    );

  const membersAfter = new Map(a.members.map((m) => [m.name, m]));
  const membersBefore = new Map(b.members.map((m) => [m.name, m]));
  for (const [name, mb] of membersBefore) {
    const ma = membersAfter.get(name);
    const mpath = `${path}.${name}`;
    if (!ma) {
      add(
        'major',
        'member-removed',
        mpath,
        `member ${name} (${describe(mb)}) removed (or renamed)`,
      );
      continue;
    }
    if (!sameRef(mb.type, ma.type))
      add(
        'major',
        'member-type-changed',
        mpath,
        `type changed from ${refName(mb.type)} to ${refName(ma.type)}`,
      );
    if (mb.list !== ma.list)
      add('major', 'member-list-changed', mpath, ma.list ? 'became a list' : 'is no longer a list');
    if (mb.nillable !== ma.nillable)
      add(
        'major',
        'member-nillable-changed',
        mpath,
        ma.nillable ? 'became nillable' : 'is no longer nillable',
      );
    if (mb.maxLength !== ma.maxLength) {
      // A lower limit refuses what requests sent before; a higher one sends readers of responses
      // what they refused before.
      const limit = (n: number | undefined) => n ?? Infinity;
      const tighter = limit(ma.maxLength) < limit(mb.maxLength);
      const breaks = tighter ? ways.has('request') : ways.has('response');
      add(
        breaks ? 'major' : 'minor',
        tighter ? 'max-length-lowered' : 'max-length-raised',
        mpath,
        `maxLength ${mb.maxLength ?? '(none)'} became ${ma.maxLength ?? '(none)'}: ${
          breaks
            ? tighter
              ? 'values valid before are refused in requests'
              : 'responses may carry values old readers refuse'
            : 'every value valid before stays valid where it travels'
        }`,
      );
    }
    if (mb.optional && !ma.optional)
      add('major', 'member-now-required', mpath, 'optional member became required');
    if (!mb.optional && ma.optional) {
      if (ways.has('response'))
        add(
          'major',
          'member-now-optional',
          mpath,
          `required member became optional in a type that responses carry: readers relied on it`,
        );
      else
        add(
          'minor',
          'member-now-optional-request',
          mpath,
          'required member became optional in a request-only type: every old request stays valid',
        );
    }
    if ((mb.doc ?? '') !== (ma.doc ?? ''))
      add('patch', 'documentation-changed', mpath, 'documentation changed');
  }
  for (const [name, ma] of membersAfter) {
    if (membersBefore.has(name)) continue;
    const mpath = `${path}.${name}`;
    if (ma.optional)
      add('minor', 'member-added-optional', mpath, `new optional member ${name} (${describe(ma)})`);
    else
      add(
        'major',
        'member-added-required',
        mpath,
        `new required member ${name} (${describe(ma)}): documents without it no longer validate`,
      );
  }
  // XSD sequences fix the order: a document in the old order fails the new schema.
  const common = b.members.map((m) => m.name).filter((n) => membersAfter.has(n));
  const commonAfter = a.members.map((m) => m.name).filter((n) => membersBefore.has(n));
  if (common.join() !== commonAfter.join())
    add(
      'major',
      'member-order-changed',
      path,
      `member order changed (xs:sequence): ${common.join(', ')} → ${commonAfter.join(', ')}`,
    );
}
