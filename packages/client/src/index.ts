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
// The generated APIs and models (openapi-generator): committed, so changes show in review.
export * from './generated/index.gen.js';
