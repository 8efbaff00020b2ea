/** Request bodies as registerRoutes reads them; the full contract is packages/client/test/contract.test.ts. */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationOf, registerRoutes, type Handlers, type OperationInputs } from '../index.js';

describe('registerRoutes: request bodies', () => {
  let app: FastifyInstance;
  const seen: Partial<OperationInputs> = {};
  // Only the operations used below; the others are never called.
  const handlers = {
    async runUserWorkflow(input: OperationInputs['runUserWorkflow']) {
      seen.runUserWorkflow = input;
      return { success: true, currentPage: 0, totalPages: 0, listBindings: {} };
    },
    async runConsoleWorkflow(input: OperationInputs['runConsoleWorkflow']) {
      seen.runConsoleWorkflow = input;
      return { success: true };
    },
  } as unknown as Handlers<null>;

  beforeAll(async () => {
    app = Fastify();
    await registerRoutes(app, { handlers, authenticate: () => null });
  });
  afterAll(() => app.close());

  const post = (url: string, contentType: string, payload: string) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': contentType, accept: 'application/json' },
      payload,
    });

  it('reads an empty JSON or XML body as no body (clients send a Content-Type on an empty POST)', async () => {
    for (const type of ['application/json', 'application/xml']) {
      const answer = await post('/user/runWorkflow?action=a', type, '');
      expect(answer.statusCode, answer.body).toBe(200);
      expect(seen.runUserWorkflow).toEqual({ query: { action: 'a' } });
    }
  });

  it('still requires a required body, and still refuses a JSON body on a form operation', async () => {
    const empty = await post('/services/rest/console/p/runWorkflow', 'application/json', ' \n');
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual({
      success: false,
      messages: [{ message: 'a request body is required', type: 'INVALID_ARGUMENT' }],
    });

    const form = '/services/rest/console/p/grantConsolePalAccess';
    expect((await post(form, 'application/json', '{"ssoId":"s"}')).statusCode).toBe(415);
    const emptyForm = await post(form, 'application/json', '');
    expect(emptyForm.statusCode).toBe(400);
    expect(emptyForm.json().messages[0].message).toBe('form field ssoId: required');

    const ok = await post(
      '/services/rest/console/p/runWorkflow',
      'application/json',
      '{"payload":"aGk="}',
    );
    expect(ok.statusCode).toBe(200);
    expect(seen.runConsoleWorkflow).toEqual({ params: { palId: 'p' }, body: { payload: 'aGk=' } });
  });

  it('reads a form field named __proto__ as a field, never as the prototype: one U1 does not take', async () => {
    const answer = await post(
      '/user/runWorkflow',
      'application/x-www-form-urlencoded',
      '__proto__=a&__proto__=b&action=go',
    );
    expect([answer.statusCode, answer.json().messages[0].message]).toEqual([
      400,
      'unknown form field "__proto__"',
    ]);
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it("refuses a form field that is none of U1's query parameters (a misspelt workflow was dropped)", async () => {
    const misspelt = await post(
      '/user/runWorkflow',
      'application/x-www-form-urlencoded',
      'action=go&wrokflow=w',
    );
    expect([misspelt.statusCode, misspelt.json().messages[0].message]).toEqual([
      400,
      'unknown form field "wrokflow"',
    ]);
    const answer = await post(
      '/user/runWorkflow',
      'application/x-www-form-urlencoded',
      'action=go&workflow=w',
    );
    expect(answer.statusCode, answer.body).toBe(200);
    expect(seen.runUserWorkflow).toEqual({ query: { action: 'go', workflow: 'w' } });
    expect(Object.getPrototypeOf(seen.runUserWorkflow!.query)).toBe(Object.prototype);
  });
});

describe('registerRoutes: multipart forms under the body limit', () => {
  let app: FastifyInstance;
  const seen: Partial<OperationInputs> = {};
  const handlers = {
    async createSso(input: OperationInputs['createSso']) {
      seen.createSso = input;
      return 'sso-1';
    },
  } as unknown as Handlers<null>;
  const bodyLimit = 1024;

  beforeAll(async () => {
    app = Fastify();
    await registerRoutes(app, { handlers, authenticate: () => null, bodyLimit });
  });
  afterAll(() => app.close());

  const boundary = 'xYzBoundary';
  const multipart = (fields: [string, string][], filename?: string) =>
    fields
      .map(
        ([name, value]) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`,
      )
      .join('') + `--${boundary}--\r\n`;
  const post = (payload: string) =>
    app.inject({
      method: 'POST',
      url: '/services/rest/enterprises/sso',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        accept: 'application/json',
      },
      payload,
    });
  const person: [string, string][] = [
    ['firstName', 'Zoë'],
    ['lastName', 'a & b'],
    ['email', 'z@example.test'],
  ];

  it('reads the fields, a file part as its text', async () => {
    const answer = await post(multipart(person));
    expect(answer.statusCode, answer.body).toBe(200);
    expect(seen.createSso).toEqual({
      form: { firstName: 'Zoë', lastName: 'a & b', email: 'z@example.test' },
    });
    expect((await post(multipart(person, 'f.txt'))).statusCode).toBe(200);
    expect(seen.createSso).toEqual({
      form: { firstName: 'Zoë', lastName: 'a & b', email: 'z@example.test' },
    });
  });

  it('answers 413 for a body over the limit, in one field or in many, and never truncates', async () => {
    const oneField = await post(multipart([...person, ['firstName', 'x'.repeat(bodyLimit)]]));
    expect(oneField.statusCode).toBe(413);
    expect(oneField.json().messages[0].type).toBe('PAYLOAD_TOO_LARGE');
    const many = Array.from({ length: 20 }, (_, i): [string, string] => [`f${i}`, 'y'.repeat(60)]);
    expect((await post(multipart([...person, ...many]))).statusCode).toBe(413);
  });

  it('answers 400 for a malformed multipart body, and for a field given twice', async () => {
    const broken = await post(
      `--${boundary}\r\nContent-Disposition: form-data; name="firstName"\r\n\r\nno end`,
    );
    expect(broken.statusCode).toBe(400);
    expect(broken.json().messages[0].type).toBe('INVALID_ARGUMENT');
    const twice = await post(multipart([...person, ['email', 'other@example.test']]));
    expect(twice.statusCode).toBe(400);
    expect(twice.json().messages[0].message).toMatch(/email/);
  });
});

describe('registerRoutes: urlencoded forms within their caps', () => {
  let app: FastifyInstance;
  const handlers = {
    async createSso() {
      return 'sso-1';
    },
  } as unknown as Handlers<null>;

  beforeAll(async () => {
    // Room for a 1 MiB form, so that the cap on fields is what refuses it.
    app = Fastify();
    await registerRoutes(app, {
      handlers,
      authenticate: () => null,
      formBodyLimit: 2 * 1024 * 1024,
    });
  });
  afterAll(() => app.close());

  const post = (payload: string, target: FastifyInstance = app) =>
    target.inject({
      method: 'POST',
      url: '/services/rest/enterprises/sso',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      payload,
    });
  const person = 'firstName=Z&lastName=L&email=z%40example.test';

  it('refuses a field the operation does not take, as an unknown member of a body', async () => {
    for (const extra of ['emial=z%40example.test', 'firstname=z', '__proto__=x'])
      expect((await post(`${person}&${extra}`)).json()).toEqual({
        success: false,
        messages: [
          {
            message: `unknown form field "${decodeURIComponent(extra.split('=')[0]!)}"`,
            type: 'INVALID_ARGUMENT',
          },
        ],
      });
    expect((await post(person)).statusCode).toBe(200);
  });

  it('refuses 1 MiB of one repeated name with 413 (it was read in quadratic time)', async () => {
    const answer = await post(`${person}&${'a=1&'.repeat(256 * 1024)}`);
    expect(answer.statusCode, answer.body).toBe(413);
    expect(answer.json()).toEqual({
      success: false,
      messages: [
        { message: 'a form holds at most 100 fields and 10 files', type: 'PAYLOAD_TOO_LARGE' },
      ],
    });
    // 100 fields are within the count: past it, a field the operation does not take is a 400.
    const within = await post(`${person}&${'a=1&'.repeat(97)}`);
    expect([within.statusCode, within.json().messages[0].message]).toEqual([
      400,
      'unknown form field "a"',
    ]);
  });

  it('by default refuses a form over 64 KiB with 413, whatever the body limit', async () => {
    const defaults = Fastify();
    await registerRoutes(defaults, { handlers, authenticate: () => null });
    try {
      const over = await post(`${person}&pad=${'x'.repeat(64 * 1024)}`, defaults);
      expect(over.statusCode).toBe(413);
      expect(over.json().messages[0].type).toBe('PAYLOAD_TOO_LARGE');
      expect((await post(person, defaults)).statusCode).toBe(200);
    } finally {
      await defaults.close();
    }
  });
});

describe('operationOf', () => {
  it('names the operation a request was routed to, and nothing for the app’s own routes', async () => {
    const app = Fastify();
    const seen: (string | undefined)[] = [];
    app.addHook('onRequest', (request, _reply, done) => {
      seen.push(operationOf(request));
      done();
    });
    app.get('/healthz', async () => 'ok');
    await registerRoutes(app, {
      handlers: { getPal: async () => ({ id: 'p' }) } as unknown as Handlers<null>,
      authenticate: () => null,
    });
    try {
      for (const url of ['/services/rest/pals/p', '/healthz', '/nowhere'])
        await app.inject({ url, headers: { accept: 'application/json' } });
      expect(seen).toEqual(['getPal', undefined, undefined]);
    } finally {
      await app.close();
    }
  });
});
