/**
 * Loads XSD files into the schema model. It understands the subset the contract
 * uses: global elements, named complexTypes with a sequence or a complexContent
 * extension, string enumerations, the built-ins of BuiltinName, minOccurs,
 * maxOccurs="unbounded", nillable, and a member's anonymous restriction of xs:string
 * by xs:maxLength. Anything else is a diagnostic, never a guess.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { Diagnostics } from '../diagnostics.js';
import type {
  BuiltinName,
  MemberModel,
  ObjectTypeModel,
  RootElementModel,
  SchemaFileModel,
  SchemaModel,
  TypeModel,
  TypeRef,
} from '../model/schema-model.js';

const XS = 'http://www.w3.org/2001/XMLSchema';
const BUILTINS: readonly BuiltinName[] = [
  'string',
  'boolean',
  'int',
  'unsignedShort',
  'base64Binary',
];

type Node = Record<string, unknown>;

/** An XML name without a colon (the names the contract declares are ASCII). */
const NCNAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** A type name is a TypeScript type's too (members and roots are quoted where they need it). */
const TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: false,
  isArray: (_name, _jpath, _isLeaf, isAttribute) => !isAttribute,
  parseAttributeValue: false,
  parseTagValue: false,
});

export function loadXsdFiles(paths: string[], diagnostics: Diagnostics): SchemaModel {
  const files: SchemaFileModel[] = [];
  const types: TypeModel[] = [];
  const roots: RootElementModel[] = [];
  const pendingExtensions: { type: ObjectTypeModel; location: string }[] = [];
  /** Named restrictions of xs:string by maxLength, by `namespace name`. */
  const limitedStrings = new Map<string, number>();

  for (const path of paths) {
    const file = basename(path);
    const text = readFileSync(path, 'utf8');
    // The parser reads past what is not XML (a lost `>`, an unquoted attribute) and would give
    // members that are not in the file, or lose some: a file must be well formed to be read.
    const wellFormed = XMLValidator.validate(text);
    if (wellFormed !== true) {
      const { line, col, msg } = wellFormed.err;
      diagnostics.error('XSD000', `${file}:${line}:${col}`, `not well-formed XML: ${msg}`);
      continue;
    }
    const doc = parser.parse(text) as Node;
    const schemaKey = Object.keys(doc).find((k) => localName(k) === 'schema');
    const schema = schemaKey ? (doc[schemaKey] as Node[])[0] : undefined;
    if (!schema) {
      diagnostics.error('XSD001', file, 'no xs:schema root element');
      continue;
    }
    const prefixes = namespacePrefixes(schema);
    const xs = [...prefixes].find(([, uri]) => uri === XS)?.[0];
    const namespace = String(schema['@targetNamespace'] ?? '');
    if (!namespace) diagnostics.error('XSD002', file, 'the schema has no targetNamespace');
    if (schema['@elementFormDefault'] !== 'unqualified')
      diagnostics.error(
        'XSD003',
        file,
        'elementFormDefault must be "unqualified" (members are unqualified)',
      );
    const prefix = [...prefixes].find(([p, uri]) => uri === namespace && p !== '')?.[0];
    if (!prefix)
      diagnostics.error(
        'XSD004',
        file,
        'bind a prefix to the targetNamespace (e.g. xmlns:pal="…")',
      );
    files.push({
      file,
      namespace,
      prefix: prefix ?? 'ns',
      version: String(schema['@version'] ?? ''),
    });

    /** The `name` a declaration must have, an XML name: a missing one would become "undefined". */
    const nameOf = (node: Node, location: string, what: string): string => {
      const name = node['@name'];
      if (typeof name === 'string' && NCNAME.test(name)) return name;
      diagnostics.error(
        'XSD024',
        location,
        name === undefined
          ? `${what} needs a name attribute`
          : `"${String(name)}" is not an XML name`,
      );
      return String(name ?? '');
    };

    const resolve = (qname: string, location: string): TypeRef | undefined => {
      const [prefix, local] = qname.includes(':') ? qname.split(':') : ['', qname];
      const uri = prefixes.get(prefix ?? '');
      if (uri === XS || (prefix === xs && xs !== undefined)) {
        if ((BUILTINS as readonly string[]).includes(local!))
          return { kind: 'builtin', name: local as BuiltinName };
        diagnostics.error('XSD010', location, `built-in type xs:${local} is not supported`);
        return undefined;
      }
      if (uri !== namespace) {
        diagnostics.error('XSD011', location, `type ${qname} is outside the target namespace`);
        return undefined;
      }
      return { kind: 'named', name: local! };
    };

    const sequenceMembers = (owner: Node, location: string): MemberModel[] => {
      const seq = child(owner, 'sequence');
      if (!seq) return [];
      for (const key of Object.keys(seq)) {
        if (!key.startsWith('@') && localName(key) !== 'element' && localName(key) !== 'annotation')
          diagnostics.error(
            'XSD020',
            location,
            `xs:${localName(key)} inside a sequence is not supported`,
          );
      }
      const members = children(seq, 'element').map((el) =>
        member(el, `${location}.${String(el['@name'] ?? '(no name)')}`),
      );
      // One name is one property of the TypeScript type and one JSON member: twice is neither.
      const seen = new Set<string>();
      for (const m of members) {
        if (seen.has(m.name))
          diagnostics.error(
            'XSD042',
            `${location}.${m.name}`,
            `member ${m.name} is declared twice in the sequence`,
          );
        seen.add(m.name);
      }
      return members;
    };

    const member = (el: Node, location: string): MemberModel => {
      const name = nameOf(el, location, 'an element');
      const maxOccurs = String(el['@maxOccurs'] ?? '1');
      if (maxOccurs !== '1' && maxOccurs !== 'unbounded')
        diagnostics.error(
          'XSD021',
          location,
          `maxOccurs="${maxOccurs}" is not supported (use 1 or unbounded)`,
        );
      let type: TypeRef | undefined;
      let maxLength: number | undefined;
      if (el['@type']) type = resolve(String(el['@type']), location);
      else {
        const anonymous = child(el, 'complexType');
        const simple = child(el, 'simpleType');
        if (anonymous) {
          // Anonymous types only occur as map entries; they get a derived name.
          const name = `${location.split('#')[1]!.split('.')[0]}Entry`;
          types.push(objectType(name, anonymous, location));
          type = { kind: 'named', name };
        } else if (simple) ({ type, maxLength } = limitedString(simple, location));
        else diagnostics.error('XSD022', location, 'an element needs a type');
      }
      return {
        name,
        type: type ?? { kind: 'builtin', name: 'string' },
        optional: String(el['@minOccurs'] ?? '1') === '0',
        list: maxOccurs === 'unbounded',
        nillable: el['@nillable'] === 'true',
        ...(maxLength === undefined ? {} : { maxLength }),
        ...docOf(el),
      };
    };

    /** `<xs:simpleType><xs:restriction base="xs:string"><xs:maxLength value="N"/>…`: a string of at most N. */
    const limitedString = (
      simple: Node,
      location: string,
    ): { type?: TypeRef; maxLength?: number } => {
      const restriction = child(simple, 'restriction');
      const base = restriction ? resolve(String(restriction['@base'] ?? ''), location) : undefined;
      const facets = Object.keys(restriction ?? {}).filter((k) => !/^[@#]/.test(k));
      const value = Number(child(restriction ?? {}, 'maxLength')?.['@value']);
      if (
        base?.kind !== 'builtin' ||
        base.name !== 'string' ||
        facets.some((k) => localName(k) !== 'maxLength') ||
        !Number.isSafeInteger(value) ||
        value < 1
      ) {
        diagnostics.error(
          'XSD023',
          location,
          'an anonymous simple type must restrict xs:string by one xs:maxLength (a positive integer)',
        );
        return base ? { type: base } : {};
      }
      return { type: base, maxLength: value };
    };

    /**
     * Members are the elements of a sequence. What else a complex type may hold (xs:attribute,
     * xs:all, xs:choice, xs:simpleContent, …) the generators do not carry: refused, not dropped.
     */
    const onlySupported = (node: Node, allowed: string[], location: string): void => {
      for (const key of Object.keys(node))
        if (!/^[@#]/.test(key) && !allowed.includes(localName(key)))
          diagnostics.error(
            'XSD026',
            location,
            `xs:${localName(key)} in a complex type is not supported (members are the elements of an xs:sequence)`,
          );
    };

    const objectType = (name: string, node: Node, location: string): ObjectTypeModel => {
      onlySupported(node, ['annotation', 'sequence', 'complexContent'], location);
      const content = child(node, 'complexContent');
      if (content) onlySupported(content, ['annotation', 'extension'], location);
      const extension = child(content ?? {}, 'extension');
      if (extension) onlySupported(extension, ['annotation', 'sequence'], location);
      const t: ObjectTypeModel = {
        kind: 'object',
        name,
        namespace,
        source: file,
        ownMembers: sequenceMembers(extension ?? node, location),
        members: [],
        ...docOf(node),
      };
      if (extension) {
        const base = resolve(String(extension['@base']), location);
        if (base?.kind === 'named') t.base = base.name;
        pendingExtensions.push({ type: t, location });
      }
      return t;
    };

    /**
     * A type's name is also a TypeScript type's, which cannot be quoted as a member's can: an XML
     * name with `-` or `.` would be a declaration the compiler refuses.
     */
    const typeNameOf = (node: Node, location: string, what: string): string => {
      const name = nameOf(node, location, what);
      if (NCNAME.test(name) && !TYPE_NAME.test(name))
        diagnostics.error(
          'XSD025',
          `${file}#${name}`,
          `type name "${name}" is not a TypeScript identifier (letters, digits and _ only)`,
        );
      return name;
    };

    for (const ct of children(schema, 'complexType')) {
      const name = typeNameOf(ct, `${file}#complexType`, 'a global xs:complexType');
      types.push(objectType(name, ct, `${file}#${name}`));
    }
    for (const st of children(schema, 'simpleType')) {
      const xsdName = typeNameOf(st, `${file}#simpleType`, 'a global xs:simpleType');
      const restriction = child(st, 'restriction');
      const values = restriction
        ? children(restriction, 'enumeration').map((e) => String(e['@value']))
        : [];
      if (restriction && values.length === 0 && child(restriction, 'maxLength')) {
        // A string of limited length is no type of its own: members that use it become
        // strings with that maxLength.
        const { maxLength } = limitedString(st, `${file}#${xsdName}`);
        if (maxLength !== undefined) limitedStrings.set(`${namespace} ${xsdName}`, maxLength);
        continue;
      }
      if (!restriction || values.length === 0) {
        diagnostics.error(
          'XSD030',
          `${file}#${xsdName}`,
          'only string enumerations and strings limited by xs:maxLength are supported as simple types',
        );
        continue;
      }
      types.push({
        kind: 'enum',
        name: xsdName.charAt(0).toUpperCase() + xsdName.slice(1),
        xsdName,
        namespace,
        source: file,
        values,
        ...docOf(st),
      });
    }
    for (const el of children(schema, 'element')) {
      const name = nameOf(el, `${file}#element`, 'a global xs:element');
      const type = resolve(String(el['@type'] ?? ''), `${file}#element ${name}`);
      if (type) roots.push({ name, namespace, type });
    }
  }

  // Enumerations are referenced like complex types in XSD: tell them apart now.
  const enumByXsdName = new Map(
    types.flatMap((t) =>
      t.kind === 'enum' ? [[`${t.namespace} ${t.xsdName}`, t.name] as const] : [],
    ),
  );
  const retarget = (ref: TypeRef, ns: string): TypeRef =>
    ref.kind === 'named' && enumByXsdName.has(`${ns} ${ref.name}`)
      ? { kind: 'enum', name: enumByXsdName.get(`${ns} ${ref.name}`)! }
      : ref;
  const limit = (m: MemberModel, ns: string): MemberModel => {
    const maxLength =
      m.type.kind === 'named' ? limitedStrings.get(`${ns} ${m.type.name}`) : undefined;
    return maxLength === undefined
      ? m
      : { ...m, type: { kind: 'builtin', name: 'string' }, maxLength };
  };
  for (const t of types) {
    if (t.kind === 'object')
      t.ownMembers = t.ownMembers.map((m) => ({
        ...limit(m, t.namespace),
        type: retarget(limit(m, t.namespace).type, t.namespace),
      }));
  }
  for (const r of roots) r.type = retarget(r.type, r.namespace);

  const names = new Set<string>();
  for (const t of types) {
    if (names.has(t.name))
      diagnostics.error('XSD040', `${t.source}#${t.name}`, `type name ${t.name} is used twice`);
    names.add(t.name);
  }
  for (const t of types) {
    if (t.kind !== 'object') continue;
    for (const m of t.ownMembers)
      if (m.type.kind !== 'builtin' && !names.has(m.type.name))
        diagnostics.error(
          'XSD041',
          `${t.source}#${t.name}.${m.name}`,
          `unknown type ${m.type.name}`,
        );
  }

  const model: SchemaModel = { files, types: types.map((t) => classify(t)), roots };
  resolveMembers(
    model,
    pendingExtensions.map((p) => p.type.name),
    diagnostics,
  );
  return model;
}

/** Maps and arrays are object shapes that JSON writes differently: recognise them by shape. */
function classify(t: TypeModel): TypeModel {
  if (t.kind !== 'object' || t.base) return t;
  const [only, ...rest] = t.ownMembers;
  if (!only || rest.length > 0 || !only.list) return t;
  if (only.name === 'entry' && only.type.kind === 'named') return t; // decided after entries are known
  return {
    kind: 'array',
    name: t.name,
    namespace: t.namespace,
    source: t.source,
    itemElement: only.name,
    item: only.type,
    ...(t.doc ? { doc: t.doc } : {}),
  };
}

function resolveMembers(model: SchemaModel, extended: string[], diagnostics: Diagnostics): void {
  const byName = new Map(model.types.map((t) => [t.name, t]));
  // Maps: a single repeated `entry` whose type has exactly `key` (string) and `value`.
  model.types = model.types.map((t) => {
    if (t.kind !== 'object' || t.base || t.ownMembers.length !== 1) return t;
    const only = t.ownMembers[0]!;
    const entry = only.type.kind === 'named' ? byName.get(only.type.name) : undefined;
    if (only.name !== 'entry' || !only.list || entry?.kind !== 'object') return t;
    const [key, value, ...rest] = entry.ownMembers;
    if (
      key?.name !== 'key' ||
      key.type.kind !== 'builtin' ||
      key.type.name !== 'string' ||
      value?.name !== 'value' ||
      rest.length
    ) {
      diagnostics.error(
        'XSD050',
        `${t.source}#${t.name}`,
        'an `entry` list must have exactly `key` (xs:string) and `value`',
      );
      return t;
    }
    return {
      kind: 'map',
      name: t.name,
      namespace: t.namespace,
      source: t.source,
      value: value.type,
      ...(t.doc ? { doc: t.doc } : {}),
    };
  });
  // Entry types only exist inside maps: drop them from the model.
  const entryNames = new Set(
    model.types.flatMap((t) => (t.kind === 'map' ? [`${t.name}Entry`] : [])),
  );
  model.types = model.types.filter((t) => !entryNames.has(t.name));

  const objects = new Map(
    model.types.flatMap((t) => (t.kind === 'object' ? [[t.name, t] as const] : [])),
  );
  const membersOf = (t: ObjectTypeModel, seen: string[]): MemberModel[] => {
    if (!t.base) return t.ownMembers;
    const base = objects.get(t.base);
    if (!base || seen.includes(t.base)) {
      diagnostics.error(
        'XSD060',
        `${t.source}#${t.name}`,
        `base type ${t.base} is not a complex type with a sequence`,
      );
      return t.ownMembers;
    }
    const inherited = membersOf(base, [...seen, t.name]);
    for (const m of t.ownMembers)
      if (inherited.some((b) => b.name === m.name))
        diagnostics.error(
          'XSD061',
          `${t.source}#${t.name}.${m.name}`,
          `member ${m.name} is already a member of the base type ${t.base}`,
        );
    return [...inherited, ...t.ownMembers];
  };
  for (const t of objects.values()) t.members = membersOf(t, []);
  void extended;
}

function namespacePrefixes(schema: Node): Map<string, string> {
  const map = new Map<string, string>();
  for (const [k, v] of Object.entries(schema)) {
    if (k === '@xmlns') map.set('', String(v));
    else if (k.startsWith('@xmlns:')) map.set(k.slice('@xmlns:'.length), String(v));
  }
  return map;
}

function localName(qname: string): string {
  return qname.includes(':') ? qname.slice(qname.indexOf(':') + 1) : qname;
}

function children(node: Node, local: string): Node[] {
  return Object.entries(node)
    .filter(([k]) => !k.startsWith('@') && localName(k) === local)
    .flatMap(([, v]) => v as Node[]);
}

function child(node: Node, local: string): Node | undefined {
  return children(node, local)[0];
}

function docOf(node: Node): { doc?: string } {
  const text = child(child(node, 'annotation') ?? {}, 'documentation');
  const value =
    text === undefined ? undefined : typeof text === 'string' ? text : (text as Node)['#text'];
  return typeof value === 'string' && value.trim() ? { doc: value.trim() } : {};
}
