/** How schema types are spelled in TypeScript: shared by the types and validators emitters. */
import type { MemberModel, TypeRef } from '../model/schema-model.js';

const BUILTIN_TS = {
  string: 'string',
  boolean: 'boolean',
  int: 'number',
  unsignedShort: 'number',
  base64Binary: 'string',
} as const;

export function tsTypeOf(ref: TypeRef): string {
  return ref.kind === 'builtin' ? BUILTIN_TS[ref.name] : ref.name;
}

/** The property type of a member, without the `?` of optionality. */
export function tsMemberType(member: MemberModel): string {
  const base = tsTypeOf(member.type);
  const listed = member.list ? `${base}[]` : base;
  return member.nillable ? `${listed} | null` : listed;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A member, root element or parameter name as a TypeScript property name or object key. An XML
 * name may hold `-` and `.` (`branch-name`), which a property name can only hold quoted; the JSON
 * member and the XML element keep the name as it is.
 */
export function tsPropertyName(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}
