/**
 * @pal-workflow/server-skeleton: a Fastify plugin for the Pal Workflow Services
 * operations. Implement `Handlers<YourContext>` and pass it to `registerRoutes`.
 */
// The generated surface is committed, so a change to it shows in review.
export * from './generated/handlers.gen.js';
export { defaultRoots, operations, type OperationId } from './generated/operations.gen.js';
export { openApiDocument } from './generated/openapi.gen.js';
export {
  maxPathParamLength,
  registerRoutes,
  type RegisterRoutesOptions,
} from './runtime/register-routes.js';
export {
  HttpError,
  badRequest,
  notAcceptable,
  CODE_BY_STATUS,
  type ErrorCode,
} from './runtime/http-error.js';
export {
  describeError,
  errorResult,
  sendError,
  type ErrorDescription,
} from './runtime/error-result.js';
export { negotiate, MEDIA_TYPE, type Format } from './runtime/negotiate.js';
export { coerce, readParams, readSearch } from './runtime/coerce.js';
export type {
  AnyDocument,
  OperationSpec,
  Page,
  ParamSpec,
  ResponseSpec,
  ScalarType,
} from './runtime/operation-spec.js';
