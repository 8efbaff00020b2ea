/**
 * @pal-workflow/client: a typed client for Pal Workflow Services, in JSON or XML.
 *
 *   const client = createPalClient({ baseUrl, username, password, format: 'xml' });
 *   const pal = await client.pals.getPal({ id: 'expense-approval' });
 */
export {
  createPalClient,
  PalApiError,
  type PalClient,
  type PalClientOptions,
} from './create-client.js';
export { wireMiddleware, type WireFormat, type XmlMiddlewareOptions } from './xml-middleware.js';
export { defaultRoots } from './generated/operations.gen.js';
// The generated APIs (openapi-generator): one class per area, one request type per operation.
export {
  ConsoleApi,
  type CreateConsoleTokenRequest,
  type DeleteConsolePalAccessRequest,
  type ExecuteConsoleWorkflowRequest,
  type GrantConsolePalAccessRequest,
  type ListConsolePalsRequest,
  type RunConsolePalRequest,
  type RunConsoleWorkflowRequest,
} from './generated/apis/ConsoleApi.gen.js';
export {
  EnterpriseApi,
  type CreateSsoRequest,
  type DeleteSsoRequest,
  type GetSsoStatusRequest,
  type InviteSsoRequest,
  type IsEmailRegisteredRequest,
  type UpdateSsoRequest,
} from './generated/apis/EnterpriseApi.gen.js';
export {
  PalsApi,
  type CreatePalTokenRequest,
  type GetPalRequest,
  type SearchPalsRequest,
} from './generated/apis/PalsApi.gen.js';
export {
  TransactionsApi,
  type CreateAnonymousTokenRequest,
  type CreateTransactionRequest,
  type CreateTransactionTokenRequest,
  type GetTransactionFromEmailRequest,
  type GetTransactionRequest,
  type RemoveAllRolesRequest,
  type RemoveTransactionRoleRequest,
  type RunTransactionRequest,
  type RunTransactionWorkflowRequest,
  type SearchTransactionsRequest,
} from './generated/apis/TransactionsApi.gen.js';
export { UserApi, type RunUserWorkflowRequest } from './generated/apis/UserApi.gen.js';
// The parts of the generated runtime that the APIs' signatures show.
export {
  RequiredError,
  type ApiResponse,
  type Middleware,
  type RequestContext,
  type ResponseContext,
} from './generated/runtime.gen.js';
// The data types the APIs take and return, with every type they hold: those of
// @pal-workflow/types (the client has no models of its own). The search types are headers here.
export {
  BookmarkType,
  FieldType,
  type Bookmark,
  type ConsoleContent,
  type ConsoleResult,
  type Data,
  type DataList,
  type DataListMap,
  type DataMap,
  type DebugInfo,
  type Document,
  type Field,
  type Image,
  type Message,
  type NameValue,
  type PalFile,
  type PalInfo,
  type Payload,
  type Result,
  type ServicePayload,
  type ServiceRequest,
  type ServiceResponse,
  type Signature,
  type StringArray,
  type StringMap,
  type Style,
  type TransactionContent,
  type TransactionInfo,
  type TransactionResult,
} from '@pal-workflow/types';
