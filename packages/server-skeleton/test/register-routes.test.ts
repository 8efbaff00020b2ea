/** Request bodies as registerRoutes reads them; the full contract is packages/client/test/contract.test.ts. */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRoutes, type Handlers, type OperationInputs } from '../src/index.js';

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
});
