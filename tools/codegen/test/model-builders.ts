/** Small pieces of the schema model for the given/want tables of the emitters. */
import type { MemberModel } from '../src/model/schema-model.js';

/** A required, single, non-nillable xs:string member named `m`, with the changes given. */
export const member = (over: Partial<MemberModel>): MemberModel => ({
  name: 'm',
  type: { kind: 'builtin', name: 'string' },
  optional: false,
  list: false,
  nillable: false,
  ...over,
});
