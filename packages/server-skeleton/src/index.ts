/**
 * @pal-workflow/server-skeleton: a Fastify plugin for the Pal Workflow Services
 * operations. Implement `Handlers<YourContext>` and pass it to `registerRoutes`.
 */
// The Handlers interface an app implements, and the input type of each operation.
export type {
  CreateAnonymousTokenInput,
  CreateConsoleTokenInput,
  CreatePalTokenInput,
  CreateSsoInput,
  CreateTransactionInput,
  CreateTransactionTokenInput,
  DeleteConsolePalAccessInput,
  DeleteSsoInput,
  ExecuteConsoleWorkflowInput,
  GetPalInput,
  GetSsoStatusInput,
  GetTransactionFromEmailInput,
  GetTransactionInput,
  GrantConsolePalAccessInput,
  Handlers,
  InviteSsoInput,
  IsEmailRegisteredInput,
  ListConsolePalsInput,
  OperationInputs,
  OperationOutputs,
  RemoveAllRolesInput,
  RemoveTransactionRoleInput,
  RunConsolePalInput,
  RunConsoleWorkflowInput,
  RunTransactionInput,
  RunTransactionWorkflowInput,
  RunUserWorkflowInput,
  SearchPalsInput,
  SearchTransactionsInput,
  UpdateSsoInput,
} from './generated/handlers.gen.js';
export { defaultRoots, operations, type OperationId } from './generated/operations.gen.js';
export { openApiDocument } from './generated/openapi.gen.js';
export {
  maxPathParamLength,
  operationOf,
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
export { negotiate, negotiateMediaType, MEDIA_TYPE, type Format } from './runtime/negotiate.js';
export { deepFreeze, isImmutable } from './runtime/frozen.js';
export { bodyItemsOver, DEFAULT_BODY_ITEM_LIMIT } from './runtime/body-items.js';
export { checkJsonObject } from './runtime/json-document.js';
export { coerce, readParams, readSearch } from './runtime/coerce.js';
export {
  DEFAULT_FORM_BODY_LIMIT,
  DEFAULT_FORM_LIMITS,
  parseUrlEncoded,
  type FormLimits,
} from './runtime/forms.js';
export type {
  AnyDocument,
  OperationSpec,
  Page,
  ParamSpec,
  ResponseSpec,
  ScalarType,
} from './runtime/operation-spec.js';
