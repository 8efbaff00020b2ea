/**
 * @pal-workflow/validators: zod schemas for every type of the Pal Workflow
 * Services XSDs, and XML/JSON codecs driven by the same schema model.
 */
// A zod schema per XSD type, and `schemas` by type name.
export {
  schemas,
  zBookmark,
  zBookmarkType,
  zConsoleContent,
  zConsoleResult,
  zData,
  zDataList,
  zDataListMap,
  zDataMap,
  zDebugInfo,
  zDocument,
  zField,
  zFieldType,
  zImage,
  zMessage,
  zNameValue,
  zNameValueList,
  zPalFile,
  zPalInfo,
  zPalInfoList,
  zPalSearch,
  zPayload,
  zResult,
  zServicePayload,
  zServiceRequest,
  zServiceResponse,
  zSignature,
  zStringArray,
  zStringMap,
  zStyle,
  zTransactionContent,
  zTransactionInfo,
  zTransactionInfoList,
  zTransactionResult,
  zTransactionSearch,
} from './generated/schemas.gen.js';
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
export { refuseRepeatedMembers } from './runtime/json-members.js';
export {
  checkWellFormedDocument,
  checkXmlDocument,
  decodeXml,
  encodeXml,
  escapeText,
} from './runtime/xml-codec.js';
export {
  xsBase64Binary,
  xsBoolean,
  xsInt,
  xsString,
  isXmlText,
  xsUnsignedShort,
} from './runtime/xsd-builtins.js';
