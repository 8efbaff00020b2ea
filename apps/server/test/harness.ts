// The shared harness of the HTTP integration suites (test/*.int.test.ts): the real server on a
// real port, over a fresh database of the project's engine (test/engine.ts: a SQLite file in a
// fresh DATA_DIR, or a new PostgreSQL database), with two enterprises, an API client for
// each (real generated secrets) and deployed test pals; the generated client for both tenants in
// both formats, a raw fetch helper, and (optionally) a real SMTP listener for the server's mail.
//
// Every response that goes over the wire in XML, through the clients or the raw helper, is
// validated against schemas/xsd by the real validator (libxml2) before the caller sees it: an
// invalid body makes the call itself fail.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPalClient,
  PalApiError,
  type PalClient,
  type WireFormat,
} from '@pal-workflow/client';
import { openApiDocument, operations, type OperationId } from '@pal-workflow/server-skeleton';
import {
  SchemaValidator,
  startSmtpListener,
  type ReceivedMail,
  type SmtpListener,
} from '@pal-workflow/test-support';
import { decodeXml } from '@pal-workflow/validators';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { createClient } from '../src/domain/clients.js';
import type { WorkflowContext } from '../src/workflows/context.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { deployPal } from '../src/domain/pals.js';
import { startServer, type RunningServer } from '../src/server.js';
import { freshDatabaseEnv } from './engine.js';

export const PAL_NS = 'urn:pal-workflow:pal';
export const TEST_SECRET_KEY = 'a5'.repeat(32);
/** Links in mails and the OpenAPI document use this; requests go to the real port. */
export const PUBLIC_URL = 'http://pal.example.test:8443';

// ------------------------------------------------------------------ test pals

/** A pal.json as docs/pal-format.md describes it (plus this service's lifetimes). */
export interface Manifest {
  id: string;
  name?: string;
  description?: string;
  category?: string;
  publisher?: string;
  branchName?: string;
  modes?: { transaction?: boolean; console?: boolean; web?: boolean };
  shadow?: boolean;
  shell?: boolean;
  test?: boolean;
  installed?: boolean;
  lifetimes?: { executeDays?: number; accessDays?: number; archiveDays?: number };
}

/**
 * The first enterprise's pals. Names, descriptions, categories and publishers overlap on purpose
 * (case, substrings, LIKE wildcards) so that every search filter has something to tell apart.
 */
export const PALS_A: Manifest[] = [
  {
    id: 'expense-approval',
    name: 'Expense Approval',
    description: 'Approve travel and purchase expenses',
    category: 'Finance',
    publisher: 'Acme Finance',
    branchName: 'main',
    modes: { transaction: true },
    lifetimes: { executeDays: 30, accessDays: 90, archiveDays: 365 },
  },
  {
    id: 'travel-expenses',
    name: 'Travel Expenses',
    description: 'Book trips and claim 100% of the costs',
    category: 'finance',
    publisher: 'Globex Travel',
    modes: { transaction: true, web: true },
  },
  {
    id: 'leave-request',
    name: 'Leave Request',
    description: 'Request holidays or sick_leave',
    category: 'HR',
    publisher: 'Acme People',
    branchName: 'release-2',
    modes: { transaction: true, console: true },
  },
  {
    id: 'team-directory',
    name: 'Team Directory',
    description: 'Find colleagues, the expense desk included',
    category: 'People',
    publisher: 'Acme People',
    modes: { console: true },
    shadow: true,
    shell: true,
  },
  {
    id: 'expense-sandbox',
    name: 'Expense Sandbox',
    description: 'The next release of expense approval, for testers',
    category: 'Finance',
    publisher: 'Acme Finance',
    modes: { transaction: true, console: true },
    test: true,
  },
  {
    id: 'it-tools',
    name: 'IT Tools',
    description: 'Installed helpers for the expense desk',
    category: 'Tools',
    publisher: 'Acme IT',
    modes: { console: true },
    installed: true,
  },
  {
    id: 'legacy-expenses',
    name: 'Legacy Expenses',
    description: 'Old expense claims',
    category: 'Finance',
    publisher: 'Acme Finance',
    modes: { transaction: true, console: true },
    test: true,
    installed: true,
  },
  // Nothing optional: every optional member absent, every flag false.
  { id: 'bare' },
];

/** The second enterprise's pals: one id of its own, and one id that the first uses too. */
export const PALS_B: Manifest[] = [
  {
    id: 'globex-secret',
    name: 'Globex Secret Expenses',
    description: 'Only Globex may see this expense pal',
    category: 'Finance',
    publisher: 'Acme Finance',
    modes: { transaction: true, console: true },
  },
  {
    id: 'expense-approval',
    name: 'Globex Expense Approval',
    description: 'Globex approves expenses its own way',
    category: 'Finance',
    publisher: 'Globex',
    modes: { transaction: true, console: true },
  },
];

/**
 * What P2 must answer for a manifest, less the two dates (the server sets them): absent optional
 * members absent, flags false unless given. `deployed` is true for every deployed pal.
 */
export function expectedPalInfo(m: Manifest): Record<string, unknown> {
  const info: Record<string, unknown> = { id: m.id };
  for (const key of ['name', 'description', 'category', 'branchName'] as const)
    if (m[key] !== undefined) info[key] = m[key];
  return {
    ...info,
    deployed: true,
    modeTransaction: m.modes?.transaction ?? false,
    modeConsole: m.modes?.console ?? false,
    modeWeb: m.modes?.web ?? false,
    shadow: m.shadow ?? false,
    shell: m.shell ?? false,
  };
}

export function manifestOf(id: string, pals: Manifest[] = PALS_A): Manifest {
  const m = pals.find((p) => p.id === id);
  if (!m) throw new Error(`no test pal ${id}`);
  return m;
}

// ------------------------------------------------------------------ the wire

/** One request and its answer as they went over the wire. */
export interface Exchange {
  method: string;
  path: string;
  accept: string | null;
  status: number;
  type: string;
  body: string;
}

export interface Answer {
  status: number;
  /** Content-Type, '' when absent. */
  type: string;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  method?: string;
  accept?: string;
  headers?: Record<string, string>;
  body?: RequestInit['body'];
  /** A tenant (its BASIC credentials), a raw Authorization value, or null for none. Default: a. */
  auth?: Tenant | string | null;
}

export interface Tenant {
  enterpriseId: string;
  name: string;
  username: string;
  password: string;
  /** The Authorization header value. */
  authorization: string;
  json: PalClient;
  xml: PalClient;
  pals: Manifest[];
}

export interface Harness {
  /** Where the server listens, e.g. http://127.0.0.1:41234 */
  url: string;
  config: Config;
  domain: WorkflowContext;
  server: RunningServer;
  dataDir: string;
  a: Tenant;
  b: Tenant;
  validator: SchemaValidator;
  /** Every exchange, in order, of the clients and of http(). */
  exchanges: Exchange[];
  /** How many XML response bodies were validated against the XSDs. */
  xmlValidated(): number;
  /** Mails received by the SMTP listener (with smtp: true). */
  mails: ReceivedMail[];
  /** Addresses the SMTP listener refuses (550) at RCPT TO; lower case. */
  refusedRecipients: Set<string>;
  /** The SMTP listener itself (with smtp: true): e.g. to hold its acknowledgments. */
  smtp: SmtpListener | undefined;
  http(path: string, options?: RequestOptions): Promise<Answer>;
  /**
   * Like http(), from a chosen local address (127.0.0.x), which fetch cannot choose: for what is
   * counted per address. The body is a string, if any; the answer is not recorded.
   */
  fromAddress(
    localAddress: string,
    path: string,
    options?: Omit<RequestOptions, 'body'> & { body?: string },
  ): Promise<Answer>;
  /** A client with other credentials (e.g. wrong ones). */
  client(credentials: { username: string; password: string }, format: WireFormat): PalClient;
  /** The operation of an exchange, by the skeleton's route table and this server's roots. */
  operationOf(method: string, path: string): OperationId | undefined;
  /** Exchanges whose status the bundled OpenAPI does not declare for their operation. */
  undeclaredStatuses(): string[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** More settings (e.g. BODY_LIMIT_BYTES, PAGE_SIZE, SERVICE_ROOT). */
  env?: Record<string, string>;
  /** Do not wait for the outbox after each request (see recordingFetch). */
  settleOutbox?: boolean;
  /** Run a real SMTP listener and point MAIL_URL at it. Without it, mail goes to the outbox. */
  smtp?: boolean;
}

export const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;

function writePal(folder: string, manifest: Manifest): string {
  const dir = join(folder, manifest.id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'pal.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}

/** Starts the real server with two tenants; see the top of this file. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), 'pal-int-'));
  const dataDir = join(root, 'data');
  const palsDir = join(root, 'pals');
  const smtp = options.smtp ? await startSmtpListener() : undefined;
  const mails: ReceivedMail[] = smtp?.received ?? [];
  const refusedRecipients = smtp?.refused ?? new Set<string>();

  const config = loadConfig({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    PUBLIC_URL,
    PAL_SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'silent',
    MAIL_FROM: 'Pal Workflow <pal@example.test>',
    // The suites send thousands of requests a minute from 127.0.0.1 (200 concurrent redeemers of
    // a token, 20 rounds): far past a person's address. rate-limits.int.test.ts sets its own.
    RATE_LIMIT_ADDRESS_REQUESTS: '1000000',
    ...(smtp ? { MAIL_URL: `smtp://127.0.0.1:${smtp.port}` } : {}),
    ...(await freshDatabaseEnv()),
    ...options.env,
  });

  const tenants: {
    name: string;
    pals: Manifest[];
    enterpriseId?: string;
    username?: string;
    password?: string;
  }[] = [
    { name: 'Acme Corporation', pals: PALS_A },
    { name: 'Globex', pals: PALS_B },
  ];
  const server = await startServer(config, {
    logger: false,
    // Through the domain, as the CLI does: enterprises, clients with generated secrets, and pal
    // folders on disk deployed by the real package loader.
    prepare: async (domain) => {
      for (const t of tenants) {
        const enterprise = await createEnterprise(domain, t.name);
        const client = await createClient(domain, enterprise.id);
        Object.assign(t, {
          enterpriseId: enterprise.id,
          username: client.username,
          password: client.password,
        });
        for (const manifest of t.pals)
          await deployPal(domain, enterprise.id, writePal(join(palsDir, enterprise.id), manifest));
      }
    },
  });

  const validator = new SchemaValidator();
  const exchanges: Exchange[] = [];
  let validated = 0;

  /**
   * fetch, recorded, with every XML answer validated against the XSDs. Mail and webhooks go out
   * through the outbox after commit; the answer is handed on once what the request put there has
   * been delivered (or scheduled for a retry), so tests read mail as it arrives. The outbox's own
   * tests (test/outbox*.int.test.ts) watch delivery without this wait.
   */
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (options.settleOutbox !== false) await server.outbox.drain();
    const text = await response.clone().text();
    const type = response.headers.get('Content-Type') ?? '';
    const url = new URL(input instanceof Request ? input.url : String(input));
    exchanges.push({
      method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
      path: url.pathname,
      accept: new Headers(init?.headers).get('Accept'),
      status: response.status,
      type,
      body: text,
    });
    // (A HEAD answer has the headers of the GET and no body.)
    if (/^(application|text)\/xml\b/.test(type) && init?.method !== 'HEAD') {
      validator.assertValid(text);
      validated += 1;
    }
    return response;
  };

  const clientFor = (credentials: { username: string; password: string }, format: WireFormat) =>
    createPalClient({
      baseUrl: server.url,
      username: credentials.username,
      password: credentials.password,
      format,
      serviceRoot: config.serviceRoot,
      userRoot: config.userRoot,
      fetch: recordingFetch,
    });

  const [a, b] = tenants.map((t): Tenant => {
    const credentials = { username: t.username!, password: t.password! };
    return {
      enterpriseId: t.enterpriseId!,
      name: t.name,
      ...credentials,
      authorization: basic(credentials.username, credentials.password),
      json: clientFor(credentials, 'json'),
      xml: clientFor(credentials, 'xml'),
      pals: t.pals,
    };
  }) as [Tenant, Tenant];

  const http = async (path: string, o: RequestOptions = {}): Promise<Answer> => {
    const headers = new Headers(o.headers);
    const auth = o.auth === undefined ? a : o.auth;
    if (auth !== null)
      headers.set('Authorization', typeof auth === 'string' ? auth : auth.authorization);
    if (o.accept !== undefined) headers.set('Accept', o.accept);
    const response = await recordingFetch(server.url + path, {
      method: o.method ?? (o.body === undefined ? 'GET' : 'POST'),
      headers,
      body: o.body,
      ...(o.body instanceof ReadableStream ? { duplex: 'half' } : {}),
    } as RequestInit);
    return {
      status: response.status,
      type: response.headers.get('Content-Type') ?? '',
      headers: response.headers,
      text: await response.text(),
    };
  };

  const fromAddress: Harness['fromAddress'] = (localAddress, path, o = {}) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...o.headers };
      const auth = o.auth === undefined ? a : o.auth;
      if (auth !== null)
        headers.Authorization = typeof auth === 'string' ? auth : auth.authorization;
      if (o.accept !== undefined) headers.Accept = o.accept;
      const req = httpRequest(
        server.url + path,
        { localAddress, method: o.method ?? (o.body === undefined ? 'GET' : 'POST'), headers },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            const answerHeaders = new Headers();
            for (const [k, v] of Object.entries(res.headers))
              if (typeof v === 'string') answerHeaders.set(k, v);
            if (answerHeaders.get('content-type')?.startsWith('application/xml'))
              validator.assertValid(text);
            resolve({
              status: res.statusCode ?? 0,
              type: res.headers['content-type'] ?? '',
              headers: answerHeaders,
              text,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(o.body);
    });

  const routes = (Object.keys(operations) as OperationId[]).map((id) => {
    const spec = operations[id];
    const rootSegment = spec.root === 'service' ? config.serviceRoot : config.userRoot;
    const pattern = `/${rootSegment}${spec.path}`.replace(/:[A-Za-z]+/g, '[^/]+');
    return { id, method: spec.method as string, regex: new RegExp(`^${pattern}$`) };
  });
  // Literal paths first: /transactions/removeAllRoles is not /transactions/{id}.
  routes.sort(
    (x, y) =>
      y.regex.source.replace(/\[\^\/\]\+/g, '').length -
      x.regex.source.replace(/\[\^\/\]\+/g, '').length,
  );

  let closed = false;
  return {
    url: server.url,
    config,
    domain: server.domain,
    server,
    dataDir,
    a,
    b,
    validator,
    exchanges,
    xmlValidated: () => validated,
    mails,
    refusedRecipients,
    smtp,
    http,
    fromAddress,
    client: clientFor,
    operationOf: (method, path) =>
      routes.find((r) => r.method === method && r.regex.test(path))?.id,
    undeclaredStatuses: () => {
      const seen = new Set<string>();
      for (const e of exchanges) {
        const id = routes.find((r) => r.method === e.method && r.regex.test(e.path))?.id;
        if (id && !declaredStatuses(id).has(String(e.status))) seen.add(`${id} ${e.status}`);
      }
      return [...seen].sort();
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await smtp?.close();
      validator.dispose();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------ assertions

/** The statuses the bundled OpenAPI declares for an operation. */
export function declaredStatuses(id: OperationId): Set<string> {
  for (const item of Object.values(openApiDocument.paths) as Record<string, unknown>[])
    for (const operation of Object.values(item) as { operationId?: string; responses?: object }[])
      if (operation?.operationId === id) return new Set(Object.keys(operation.responses ?? {}));
  throw new Error(`no operation ${id} in the bundled OpenAPI`);
}

// The errorResult check is shared with the client's contract test.
export { expectError } from '@pal-workflow/test-support';

/** The value of a simple XML answer (`<pal:string>`, `<pal:boolean>`, `<pal:int>`). */
export function simpleXml(
  answer: Answer,
  root: 'string' | 'boolean' | 'int',
): string | boolean | number {
  expect(answer.status, answer.text).toBe(200);
  expect(answer.type).toBe('application/xml; charset=utf-8');
  return decodeXml(answer.text, root) as string | boolean | number;
}

/** Awaits a client call that must fail with this status and errorResult code; returns the error. */
export async function apiError(
  call: Promise<unknown>,
  status: number,
  code: string,
): Promise<PalApiError> {
  const error = await rejection(call);
  expect(error).toBeInstanceOf(PalApiError);
  const e = error as PalApiError;
  expect([e.status, e.code, e.result?.success]).toEqual([status, code, false]);
  return e;
}

/** Awaits a call that must fail and returns what it threw. */
export async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

export const form = (fields: Record<string, string>) => new URLSearchParams(fields);
