/**
 * What other tools may use of the generator: the loaders, the two models and the OpenAPI
 * bundle. tools/contract reads the contract at two commits through these, so a diff sees
 * exactly what the generators see.
 */
export { abs, defaultContext, type GenerateContext } from './context.js';
export { Diagnostics, GenerationError, type Diagnostic } from './diagnostics.js';
export { loadApi } from './load/openapi.js';
export { loadXsdFiles } from './load/xsd.js';
export { emitOpenApiBundle, type OpenApiBundle } from './emit/openapi-bundle.js';
export type {
  ApiModel,
  OperationModel,
  ParamModel,
  ResponseModel,
  ScalarType,
} from './model/operation-model.js';
export type {
  MemberModel,
  RootElementModel,
  SchemaFileModel,
  SchemaModel,
  TypeModel,
  TypeRef,
} from './model/schema-model.js';
