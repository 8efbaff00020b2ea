/**
 * @pal-workflow/validators: zod schemas for every type of the Pal Workflow
 * Services XSDs, and XML/JSON codecs driven by the same schema model.
 */
// The generated surface is committed, so a change to it shows in review.
export * from './generated/schemas.gen.js';
export {
  namespaces,
  rootElements,
  typeDescriptors,
  type RootName,
  type RootValues,
  type TypeName,
} from './generated/descriptors.gen.js';
export type { MemberDescriptor, RootDescriptor, TypeDescriptor } from './runtime/descriptor.js';
export { DecodeError, type DecodeIssue } from './runtime/decode-error.js';
export { decodeJson, encodeJson, validateRoot } from './runtime/json-codec.js';
export { checkXmlDocument, decodeXml, encodeXml, escapeText } from './runtime/xml-codec.js';
export {
  xsBase64Binary,
  xsBoolean,
  xsInt,
  xsString,
  xsUnsignedShort,
} from './runtime/xsd-builtins.js';
