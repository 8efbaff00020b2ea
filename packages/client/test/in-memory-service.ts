/**
 * A throwaway Pal Workflow Services server for the contract test: the skeleton's
 * Fastify plugin over in-memory handlers for all 27 operations. Handlers keep a
 * little state (pals, transactions, roles, grants, accounts) and echo their inputs
 * deterministically, so a field lost on the way in or out makes an assertion fail.
 * Each handler records its operation id and the typed input it received.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import {
  HttpError,
  registerRoutes,
  type Handlers,
  type OperationId,
  type OperationInputs,
  type Page,
} from '@pal-workflow/server-skeleton';
import type {
  NameValue,
  PalInfo,
  PalSearch,
  TransactionInfo,
  TransactionSearch,
} from '@pal-workflow/types';

export interface Ctx {
  user: string;
}

export const USERNAME = 'tester';
export const PASSWORD = 'secret';
export const ENTRY_BASE = 'http://pal.test/services/enter/';

export interface PalFixture {
  info: PalInfo;
  test: boolean;
}

export interface ServiceState {
  /** Operation ids in the order the handlers ran. */
  calls: OperationId[];
  /** Method, URL and Accept header of every request that reached the server. */
  requests: { method: string; url: string; accept: string | undefined }[];
  /** The last typed input each operation received. */
  inputs: { [K in OperationId]?: OperationInputs[K] };
  pals: PalFixture[];
  transactions: Map<string, { info: TransactionInfo; palId: string }>;
  roles: { transactionId: string; sso: string; role: string }[];
  grants: Set<string>;
  accounts: Map<string, { firstName: string; lastName: string; email: string; status: string }>;
  counter: number;
}

export const PAL_FIXTURES: readonly PalFixture[] = [
  {
    info: {
      id: 'expense-approval',
      name: 'Expense Approval',
      description: 'Approve expenses <quickly> & fairly',
      category: 'Finance',
      branchName: 'main',
      createDate: '2024-05-01T09:30:00Z',
      lastModifiedDate: '2024-06-02T10:00:00Z',
      deployed: true,
      modeTransaction: true,
      modeConsole: true,
      modeWeb: false,
      shadow: false,
      shell: true,
    },
    test: false,
  },
  {
    info: {
      id: 'expense-sandbox',
      name: 'Expense Sandbox',
      category: 'Finance',
      deployed: false,
      modeTransaction: true,
      modeConsole: false,
      modeWeb: false,
      shadow: true,
      shell: false,
    },
    test: true,
  },
  {
    info: {
      id: 'leave-request',
      name: 'Leave Request für Zoë ✓',
      description: '  padded  ',
      category: 'HR',
      deployed: true,
      modeTransaction: false,
      modeConsole: true,
      modeWeb: true,
      shadow: false,
      shell: false,
    },
    test: false,
  },
  {
    info: {
      id: 'travel-expenses',
      name: 'Travel Expenses',
      deployed: true,
      modeTransaction: true,
      modeConsole: false,
      modeWeb: true,
      shadow: false,
      shell: false,
    },
    test: false,
  },
];

export function createState(): ServiceState {
  const state: ServiceState = {
    calls: [],
    requests: [],
    inputs: {},
    pals: PAL_FIXTURES.map((p) => structuredClone(p)),
    transactions: new Map(),
    roles: [],
    grants: new Set(),
    accounts: new Map(),
    counter: 0,
  };
  state.transactions.set('tx-seed', {
    palId: 'expense-approval',
    info: {
      id: 'tx-seed',
      name: 'Seed transaction',
      description: 'seeded',
      category: 'Finance',
      status: 'OPEN',
      webServiceStatus: 'IDLE',
      createDate: '2024-07-01T08:00:00Z',
      test: false,
    },
  });
  return state;
}

const PAGE_SIZE = 100;

function matches(value: string | undefined, filter: string | undefined, exact: boolean): boolean {
  if (filter === undefined) return true;
  if (value === undefined) return false;
  return exact ? value === filter : value.toLowerCase().includes(filter.toLowerCase());
}

function page<T>(all: T[], startRecord: number): Page<T> {
  return { items: all.slice(startRecord, startRecord + PAGE_SIZE), total: all.length };
}

function searchPals(pals: PalFixture[], search: PalSearch): Page<PalInfo> {
  const found = pals.filter(
    (p) =>
      (search.includeTest || !p.test) &&
      matches(p.info.name, search.name, search.exactName) &&
      matches(p.info.category, search.category, search.exactCategory),
  );
  return page(
    found.map((p) => p.info),
    search.startRecord,
  );
}

const notFound = (what: string) => new HttpError(404, 'NOT_FOUND', `${what} does not exist`);

export function createHandlers(state: ServiceState) {
  const seen = <K extends OperationId>(id: K, input: OperationInputs[K]): void => {
    state.calls.push(id);
    state.inputs[id] = structuredClone(input) as ServiceState['inputs'][K];
  };
  const transaction = (id: string) => {
    const tx = state.transactions.get(id);
    if (!tx) throw notFound(`transaction ${id}`);
    return tx;
  };
  const account = (sso: string) => {
    const a = state.accounts.get(sso);
    if (!a) throw notFound(`SSO ${sso}`);
    return a;
  };
  const emailInUse = (email: string) =>
    [...state.accounts.values()].some((a) => a.email === email && a.status !== 'DELETED');
  const removeRoles = (keep: (r: ServiceState['roles'][number]) => boolean): number => {
    const before = state.roles.length;
    state.roles = state.roles.filter(keep);
    return before - state.roles.length;
  };

  return {
    // ------------------------------------------------------------ console
    async listConsolePals(input) {
      seen('listConsolePals', input);
      return searchPals(
        state.pals.filter((p) => p.info.modeConsole),
        input.search,
      );
    },
    async runConsolePal(input, ctx) {
      seen('runConsolePal', input);
      const echo: NameValue[] = [...(input.body.postData ?? [])];
      return [
        ...echo,
        { name: 'palId', value: input.params.palId },
        { name: 'user', value: ctx.user },
      ];
    },
    async grantConsolePalAccess(input) {
      seen('grantConsolePalAccess', input);
      state.grants.add(
        `${input.params.palId}|${input.form.ssoId}|${input.form.useEnterpriseProfile ?? false}`,
      );
      return true;
    },
    async deleteConsolePalAccess(input) {
      seen('deleteConsolePalAccess', input);
      return state.grants.delete(
        `${input.params.palId}|${input.form.ssoId}|${input.form.useEnterpriseProfile ?? false}`,
      );
    },
    async executeConsoleWorkflow(input) {
      seen('executeConsoleWorkflow', input);
      return {
        success: true,
        palId: input.params.palId,
        data: [
          { name: 'contentType', value: input.body.contentType },
          { name: 'text', value: input.body.text },
        ],
      };
    },
    async createConsoleToken(input) {
      seen('createConsoleToken', input);
      const { ssoId, useEnterpriseProfile, action } = input.form;
      return `${input.params.palId}|${ssoId}|${useEnterpriseProfile}|${action}`;
    },
    async runConsoleWorkflow(input, ctx) {
      seen('runConsoleWorkflow', input);
      const { postData = [], documents = [], images = [], styles = [], payload } = input.body;
      return {
        success: true,
        messages: [
          {
            message: `${documents.length} documents, ${images.length} images, ${styles.length} styles`,
            type: null,
          },
          { message: `run by ${ctx.user}`, type: 'INFO' },
        ],
        data: postData,
        ...(payload === undefined
          ? {}
          : {
              payload: {
                filename: 'payload.bin',
                contentType: 'application/octet-stream',
                content: payload,
              },
            }),
        palId: input.params.palId,
        token: documents
          .map((d) => d.fields?.map((f) => `${f.id}=${f.value}`).join(',') ?? '')
          .join(';'),
        palInfoList: state.pals.filter((p) => p.info.id === input.params.palId).map((p) => p.info),
      };
    },

    // ------------------------------------------------------------ transactions
    async searchTransactions(input) {
      seen('searchTransactions', input);
      const s: TransactionSearch = input.search;
      const found = [...state.transactions.entries()]
        .filter(
          ([id, tx]) =>
            (s.includeTest || !tx.info.test) &&
            matches(tx.info.name, s.name, s.exactName) &&
            (s.palId === undefined || tx.palId === s.palId) &&
            (s.status === undefined || tx.info.status === s.status) &&
            (s.sso === undefined ||
              state.roles.some((r) => r.transactionId === id && r.sso === s.sso)),
        )
        .map(([, tx]) => tx.info);
      return page(found, s.startRecord);
    },
    async createTransaction(input) {
      seen('createTransaction', input);
      const pal = state.pals.find((p) => p.info.id === input.form.palId);
      if (!pal) throw notFound(`pal ${input.form.palId}`);
      const id = `tx-${++state.counter}`;
      state.transactions.set(id, {
        palId: input.form.palId,
        info: {
          id,
          name: pal.info.name,
          category: pal.info.category,
          status: 'NEW',
          test: pal.test,
        },
      });
      return id;
    },
    async getTransactionFromEmail(input, ctx) {
      seen('getTransactionFromEmail', input);
      return {
        success: true,
        messages: [{ message: `resolved for ${ctx.user}`, type: null }],
        token: input.query.encryptedToken,
        action: input.query.encryptedAction,
        emailType: 'LINK',
        recordsProcessed: 0,
      };
    },
    async removeAllRoles(input) {
      seen('removeAllRoles', input);
      return removeRoles((r) => r.sso !== input.form.userSSO);
    },
    async createTransactionToken(input) {
      seen('createTransactionToken', input);
      transaction(input.params.transactionId);
      state.roles.push({
        transactionId: input.params.transactionId,
        sso: input.form.userSSO,
        role: 'participant',
      });
      return `participant:${input.params.transactionId}:${input.form.userSSO}`;
    },
    async runTransactionWorkflow(input) {
      seen('runTransactionWorkflow', input);
      const tx = transaction(input.params.transactionId);
      const postData = input.body.postData ?? [];
      return {
        success: true,
        data: postData,
        ...(input.body.payload === undefined ? {} : { payload: { content: input.body.payload } }),
        transactionId: input.params.transactionId,
        transactionInfoList: [tx.info],
        palId: tx.palId,
        recordsProcessed: postData.length,
      };
    },
    async removeTransactionRole(input) {
      seen('removeTransactionRole', input);
      transaction(input.params.transactionId);
      return removeRoles(
        (r) => !(r.transactionId === input.params.transactionId && r.sso === input.form.userSSO),
      );
    },
    async createAnonymousToken(input) {
      seen('createAnonymousToken', input);
      transaction(input.params.transactionId);
      state.roles.push({
        transactionId: input.params.transactionId,
        sso: input.form.userSSO,
        role: 'anonymous',
      });
      return `anonymous:${input.params.transactionId}:${input.form.userSSO}:${input.form.action}`;
    },
    async runTransaction(input) {
      seen('runTransaction', input);
      transaction(input.params.transactionId);
      return [
        { name: 'transactionId', value: input.params.transactionId },
        ...(input.body.postData ?? []),
      ];
    },
    async getTransaction(input) {
      seen('getTransaction', input);
      return transaction(input.params.id).info;
    },

    // ------------------------------------------------------------ user
    async runUserWorkflow(input, ctx) {
      seen('runUserWorkflow', input);
      const body = input.body;
      return {
        success: true,
        action: input.query.action,
        target: input.query.workflow,
        successMessage: `ran for ${ctx.user}`,
        data: JSON.stringify({ query: input.query, hasBody: body !== undefined }),
        ...(body?.payload === undefined ? {} : { payload: body.payload }),
        currentPage: body?.page ?? 0,
        totalPages: body?.pageSize ?? 0,
        listBindings: body?.payload?.data ?? {},
        ...(body?.debug
          ? {
              debugInfo: {
                workflow: input.query.workflow,
                line: body.sizeLimit,
                action: input.query.action,
                callStack: Object.keys(body.payload?.dataLists ?? {}),
              },
            }
          : {}),
      };
    },

    // ------------------------------------------------------------ enterprise
    async createSso(input) {
      seen('createSso', input);
      if (emailInUse(input.form.email))
        throw new HttpError(409, 'CONFLICT', `${input.form.email} is already registered`);
      const sso = `sso-${++state.counter}`;
      state.accounts.set(sso, { ...input.form, status: 'ACTIVE' });
      return sso;
    },
    async deleteSso(input) {
      seen('deleteSso', input);
      account(input.form.sso).status = 'DELETED';
      return true;
    },
    async inviteSso(input) {
      seen('inviteSso', input);
      const registered = [...state.accounts.values()].find(
        (a) => a.email === input.form.email && a.status !== 'DELETED',
      );
      if (!registered) throw notFound(`an account for ${input.form.email}`);
      const sso = `sso-${++state.counter}`;
      state.accounts.set(sso, { ...registered, status: 'PENDING_ACTIVATION' });
      return sso;
    },
    async isEmailRegistered(input) {
      seen('isEmailRegistered', input);
      return emailInUse(input.query.email);
    },
    async getSsoStatus(input) {
      seen('getSsoStatus', input);
      return account(input.query.sso).status;
    },
    async updateSso(input) {
      seen('updateSso', input);
      const { sso, ...fields } = input.form;
      const a = account(sso);
      if (a.email !== fields.email && emailInUse(fields.email))
        throw new HttpError(409, 'CONFLICT', `${fields.email} is already registered`);
      Object.assign(a, fields);
      return true;
    },

    // ------------------------------------------------------------ pals
    async searchPals(input) {
      seen('searchPals', input);
      return searchPals(state.pals, input.search);
    },
    async getPal(input) {
      seen('getPal', input);
      const pal = state.pals.find((p) => p.info.id === input.params.id);
      if (!pal) throw notFound(`pal ${input.params.id}`);
      return pal.info;
    },
    async createPalToken(input) {
      seen('createPalToken', input);
      return `${ENTRY_BASE}${encodeURIComponent(input.params.palId)}.${encodeURIComponent(input.form.userSSO)}`;
    },
  } satisfies Handlers<Ctx>;
}

/** BASIC credentials of the one test client; anything else is a 401. */
export function authenticate(request: FastifyRequest): Ctx {
  const header = request.headers.authorization ?? '';
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : undefined;
  if (decoded !== `${USERNAME}:${PASSWORD}`)
    throw new HttpError(
      401,
      'UNAUTHORIZED',
      match ? 'wrong credentials' : 'BASIC credentials are required',
    );
  return { user: USERNAME };
}

export interface RunningService {
  baseUrl: string;
  state: ServiceState;
  close(): Promise<void>;
}

export async function startService(
  options: { serviceRoot?: string; userRoot?: string; prefix?: string } = {},
): Promise<RunningService> {
  const state = createState();
  const app = Fastify({ logger: false });
  app.addHook('onRequest', async (request) => {
    state.requests.push({
      method: request.method,
      url: request.url,
      accept: request.headers.accept,
    });
  });
  const plugin = (scope: FastifyInstance) =>
    registerRoutes<Ctx>(scope, {
      handlers: createHandlers(state),
      authenticate,
      serviceRoot: options.serviceRoot,
      userRoot: options.userRoot,
    });
  if (options.prefix) await app.register(plugin, { prefix: options.prefix });
  else await plugin(app);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, state, close: () => app.close() };
}
