// A consumer of the published packages: a server from the skeleton, the client in both formats.
import Fastify from 'fastify';
import type { PalInfo } from '@pal-workflow/types';
import { decodeXml, encodeXml, zPalInfo } from '@pal-workflow/validators';
import { HttpError, registerRoutes, type Handlers } from '@pal-workflow/server-skeleton';
import { createPalClient, PalApiError } from '@pal-workflow/client';

const pal: PalInfo = {
  id: 'p1',
  name: 'Smoke',
  deployed: true,
  modeTransaction: true,
  modeConsole: false,
  modeWeb: false,
  shadow: false,
  shell: false,
};
zPalInfo.parse(pal);
if (decodeXml(encodeXml('palInfo', pal), 'palInfo').name !== 'Smoke')
  throw new Error('XML round trip failed');

const notUsed = async (): Promise<never> => {
  throw new HttpError(501, 'NOT_IMPLEMENTED', 'not in this smoke test');
};
const handlers: Handlers<{ user: string }> = {
  getPal: async ({ params }) => {
    if (params.id !== pal.id) throw new HttpError(404, 'NOT_FOUND', 'no such pal');
    return pal;
  },
  searchPals: async () => ({ items: [pal], total: 1 }),
  listConsolePals: notUsed,
  runConsolePal: notUsed,
  grantConsolePalAccess: notUsed,
  deleteConsolePalAccess: notUsed,
  executeConsoleWorkflow: notUsed,
  createConsoleToken: notUsed,
  runConsoleWorkflow: notUsed,
  searchTransactions: notUsed,
  createTransaction: notUsed,
  getTransactionFromEmail: notUsed,
  removeAllRoles: notUsed,
  createTransactionToken: notUsed,
  runTransactionWorkflow: notUsed,
  removeTransactionRole: notUsed,
  createAnonymousToken: notUsed,
  runTransaction: notUsed,
  getTransaction: notUsed,
  runUserWorkflow: notUsed,
  createSso: notUsed,
  deleteSso: notUsed,
  inviteSso: notUsed,
  isEmailRegistered: async ({ query }) => query.email.endsWith('@example.com'),
  getSsoStatus: notUsed,
  updateSso: notUsed,
  createPalToken: notUsed,
};

const app = Fastify();
await registerRoutes(app, { handlers, authenticate: () => ({ user: 'smoke' }) });
const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
try {
  for (const format of ['json', 'xml'] as const) {
    const client = createPalClient({ baseUrl, username: 'u', password: 'p', format });
    const got = await client.pals.getPal({ id: 'p1' });
    if (got.name !== 'Smoke' || got.deployed !== true)
      throw new Error(`${format}: getPal gave ${JSON.stringify(got)}`);
    const list = await client.pals.searchPals({});
    if (list.length !== 1) throw new Error(`${format}: searchPals gave ${list.length}`);
    if ((await client.enterprise.isEmailRegistered({ email: 'a@example.com' })) !== true)
      throw new Error(`${format}: E4`);
    const missing = await client.pals.getPal({ id: 'nope' }).catch((e: unknown) => e);
    if (!(missing instanceof PalApiError) || missing.status !== 404 || missing.code !== 'NOT_FOUND')
      throw new Error(`${format}: expected a 404 PalApiError, got ${String(missing)}`);
  }
  console.log('smoke: ok');
} finally {
  await app.close();
}
