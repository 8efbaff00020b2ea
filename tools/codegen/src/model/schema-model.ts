/**
 * The one model of the schemas that every emitter reads. Loaders (load/xsd.ts,
 * load/openapi.ts) build it; emitters never parse XSD or YAML themselves.
 */

/** XSD built-in types the contract uses, by their local name in the XSD namespace. */
export type BuiltinName = 'string' | 'boolean' | 'int' | 'unsignedShort' | 'base64Binary';

export type TypeRef =
  | { kind: 'builtin'; name: BuiltinName }
  | { kind: 'enum'; name: string }
  | { kind: 'named'; name: string };

export interface MemberModel {
  name: string;
  type: TypeRef;
  /** minOccurs="0" */
  optional: boolean;
  /** maxOccurs="unbounded": the element repeats, no wrapper */
  list: boolean;
  nillable: boolean;
  /** An xs:maxLength facet: the member is an anonymous restriction of xs:string. */
  maxLength?: number;
  doc?: string;
}

interface TypeBase {
  /** TypeScript and schema name, PascalCase (the XSD complexType name). */
  name: string;
  namespace: string;
  /** The schema file the type comes from, e.g. "pal.xsd". */
  source: string;
  doc?: string;
}

/** A sequence of members, possibly extending a base type. */
export interface ObjectTypeModel extends TypeBase {
  kind: 'object';
  base?: string;
  /** Members declared by this type (without the base's). */
  ownMembers: MemberModel[];
  /** Members in wire order: the base's first, then the own ones. */
  members: MemberModel[];
}

/** A type whose only member is a repeated `entry` with `key` and `value`: a JSON object. */
export interface MapTypeModel extends TypeBase {
  kind: 'map';
  value: TypeRef;
}

/** A type whose only member is one repeated element: a JSON array. */
export interface ArrayTypeModel extends TypeBase {
  kind: 'array';
  itemElement: string;
  item: TypeRef;
}

export interface EnumTypeModel extends TypeBase {
  kind: 'enum';
  /** The XSD simpleType name, e.g. "fieldType". */
  xsdName: string;
  values: string[];
}

export type TypeModel = ObjectTypeModel | MapTypeModel | ArrayTypeModel | EnumTypeModel;

export interface RootElementModel {
  name: string;
  namespace: string;
  type: TypeRef;
}

export interface SchemaFileModel {
  file: string;
  namespace: string;
  /** The prefix the schema binds to its target namespace; XML documents use it for the root. */
  prefix: string;
  version: string;
}

export interface SchemaModel {
  files: SchemaFileModel[];
  /** Every named type, in declaration order of the files. */
  types: TypeModel[];
  roots: RootElementModel[];
}

export function findType(model: SchemaModel, name: string): TypeModel {
  const found = model.types.find((t) => t.name === name);
  if (!found) throw new Error(`unknown type ${name}`);
  return found;
}

/** Types in an order where every type comes after the types it refers to. */
export function dependencyOrder(model: SchemaModel): TypeModel[] {
  const byName = new Map(model.types.map((t) => [t.name, t]));
  const done = new Set<string>();
  const out: TypeModel[] = [];
  const visit = (t: TypeModel) => {
    if (done.has(t.name)) return;
    done.add(t.name);
    for (const dep of dependenciesOf(t)) {
      const d = byName.get(dep);
      if (d) visit(d);
    }
    out.push(t);
  };
  model.types.forEach(visit);
  return out;
}

function dependenciesOf(t: TypeModel): string[] {
  const refs: TypeRef[] =
    t.kind === 'object'
      ? t.ownMembers.map((m) => m.type)
      : t.kind === 'map'
        ? [t.value]
        : t.kind === 'array'
          ? [t.item]
          : [];
  const names = refs.filter((r) => r.kind !== 'builtin').map((r) => r.name);
  return t.kind === 'object' && t.base ? [t.base, ...names] : names;
}
