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
