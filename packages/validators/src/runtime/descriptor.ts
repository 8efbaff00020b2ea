/** The shape of the generated codec descriptors (../generated/descriptors.gen.ts). */

/** `xs:<builtin>` or the name of a generated type. */
export type TypeRefName = string;

export interface MemberDescriptor {
  readonly name: string;
  readonly type: TypeRefName;
  readonly optional: boolean;
  readonly list: boolean;
  readonly nillable: boolean;
}

export type TypeDescriptor =
  | {
      readonly kind: 'object';
      readonly namespace: string;
      /** The type it extends; its members come first in `members`. */
      readonly base?: string;
      readonly members: readonly MemberDescriptor[];
    }
  | { readonly kind: 'map'; readonly value: TypeRefName }
  | { readonly kind: 'array'; readonly itemElement: string; readonly item: TypeRefName }
  | { readonly kind: 'enum'; readonly values: readonly string[] };

export interface RootDescriptor {
  readonly namespace: string;
  /** The prefix the schema binds to the namespace; the encoder writes the root with it. */
  readonly prefix: string;
  readonly type: TypeRefName;
}
