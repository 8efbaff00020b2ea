// One form post must not freeze every tenant (issue 16): a form of 1 MiB of one repeated name used
// to be read in quadratic time on the event loop (a 200 KB body kept /healthz from answering for
// 42 s). Nor one XML or JSON body: 25 MiB of `<postData>` (1.3 million elements) was parsed whole
// before the operation ran, and held /healthz 24 s on a slow machine. The server runs in a process of its own here, so that a blocked event loop would be seen
// from outside, as a load balancer sees it: another connection's /healthz must be answered while
// the form is handled, and the form answered 413 in the negotiated errorResult format.
import { connect } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createClient } from '../src/domain/clients.js';
import { createWorkflowContext } from '../src/workflows/context.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { connectDatabase } from '../src/storage/database.js';
import { engine } from './engine.js';
import { basic } from './harness.js';
import { tempDir, TEST_SECRET_KEY } from './helpers.js';
import { serve, type ServerProcess } from './serve-process.js';

/** Long enough for any healthy server on a busy machine; a frozen one took minutes. */
const HEALTH_PATIENCE_MS = 10_000;

/** Sends one raw HTTP/1.1 request; resolves once all of it was handed to the kernel. */
function sendRaw(
  url: string,
  head: string,
  body: string,
): { sent: Promise<void>; answer: Promise<{ status: number; text: string }> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let raw = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (raw += chunk));
  // The server may answer 413 and close before it read everything: that is an answer too.
  socket.on('error', () => {});
  const sent = new Promise<void>((done) => socket.write(head + body, () => done()));
  const answer = new Promise<{ status: number; text: string }>((done) =>
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      done({ status, text: raw.slice(raw.indexOf('\r\n\r\n') + 4) });
    }),
  );
  return { sent, answer };
}

// The parser does not depend on the engine: SQLite's run is enough.
describe.runIf(engine === 'sqlite')('a form of 1 MiB of one repeated name', () => {
  const dir = tempDir('pal-form-flood-');
  let server: ServerProcess;
  let auth: string;
  beforeAll(async () => {
    // Room for a 1 MiB form, so that it is read and refused by its number of fields.
    // A short REQUEST_TIMEOUT_MS, so that a body that never arrives is let go within the test.
    const env = {
      PAL_SECRET_KEY: TEST_SECRET_KEY,
      FORM_BODY_LIMIT_BYTES: String(2 * 1024 * 1024),
      REQUEST_TIMEOUT_MS: '5000',
    };
    const dataDir = join(dir.path, 'data');
    const config = loadConfig({ ...env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const { db } = await connectDatabase(config);
    const ctx = createWorkflowContext({ db, config, log: pino({ level: 'silent' }) });
    const client = await createClient(ctx, (await createEnterprise(ctx, 'Acme')).id);
    auth = basic(client.username, client.password);
    ctx.mailer.close();
    await db.destroy();
    server = await serve({ ...env, LOG_LEVEL: 'info' }, dataDir);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  const healthz = async () => {
    const response = await fetch(`${server.url}/healthz`, {
      signal: AbortSignal.timeout(HEALTH_PATIENCE_MS),
    }).catch((error: unknown) => {
      throw new Error(`/healthz did not answer within ${HEALTH_PATIENCE_MS} ms: ${String(error)}`);
    });
    return response.status;
  };

  it('is refused with 413 while another connection is answered', async () => {
    const body = `palId=p&${'a=1&'.repeat(256 * 1024)}`;
    const { host } = new URL(server.url);
    const post = sendRaw(
      server.url,
      `POST /services/rest/transactions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth}\r\n` +
        `Accept: application/json\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      body,
    );
    await post.sent;
    // The whole body is at the server now. Until the form is answered, /healthz is asked again and
    // again on other connections, and each time it must answer: a quadratic read of the form
    // would hold the event loop for minutes, and one of them would wait in vain.
    let answered = false;
    void post.answer.then(() => (answered = true));
    let checks = 0;
    do {
      expect(await healthz()).toBe(200);
      checks += 1;
    } while (!answered);
    expect(checks).toBeGreaterThan(0);
    const answer = await post.answer;
    expect(answer.status, answer.text).toBe(413);
    expect(JSON.parse(answer.text)).toEqual({
      success: false,
      messages: [
        { message: 'a form holds at most 100 fields and 10 files', type: 'PAYLOAD_TOO_LARGE' },
      ],
    });
    expect(await healthz()).toBe(200);
  });

  /** Posts `body` to runWorkflow of a transaction that does not exist, checking /healthz meanwhile. */
  async function postBody(type: string, body: string): Promise<{ status: number; text: string }> {
    const { host } = new URL(server.url);
    const post = sendRaw(
      server.url,
      `POST /services/rest/transactions/nosuchtx/runWorkflow HTTP/1.1\r\nHost: ${host}\r\n` +
        `Authorization: ${auth}\r\nAccept: ${type}\r\nContent-Type: ${type}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      body,
    );
    await post.sent;
    let answered = false;
    void post.answer.then(() => (answered = true));
    do expect(await healthz()).toBe(200);
    while (!answered);
    return post.answer;
  }

  it('an XML or JSON body of too many elements is refused with 413 before it is parsed', async () => {
    const pairs = 440_000;
    const xml =
      `<pal:transactionContent xmlns:pal="urn:pal-workflow:pal">` +
      '<postData><name>n</name><value>v</value></postData>'.repeat(pairs) +
      '</pal:transactionContent>';
    const xmlAnswer = await postBody('application/xml', xml);
    expect(xmlAnswer.status, xmlAnswer.text.slice(0, 300)).toBe(413);
    expect(xmlAnswer.text).toContain(
      '<message>the body holds more than 100000 items (tags, attributes and references)</message><type>PAYLOAD_TOO_LARGE</type>',
    );

    // Few elements, 2 million attributes: as dear to parse (70 s here before).
    const attributes = await postBody(
      'application/xml',
      `<pal:transactionContent xmlns:pal="urn:pal-workflow:pal"${' a=""'.repeat(2_000_000)}/>`,
    );
    expect(attributes.status, attributes.text.slice(0, 300)).toBe(413);

    const json = JSON.stringify({ postData: Array(pairs).fill({ name: 'n', value: 'v' }) });
    const jsonAnswer = await postBody('application/json', json);
    expect(jsonAnswer.status, jsonAnswer.text.slice(0, 300)).toBe(413);
    expect(JSON.parse(jsonAnswer.text)).toEqual({
      success: false,
      messages: [
        {
          message: 'the body holds more than 100000 items (values, members and strings)',
          type: 'PAYLOAD_TOO_LARGE',
        },
      ],
    });

    // The size alone is no reason: 20 MiB in one value (commas and brackets in it) is read, and
    // the operation answers for itself.
    const text = 'a, b, {c}, [d]; '.repeat(1_300_000);
    const large = await postBody(
      'application/json',
      JSON.stringify({ postData: [{ name: 'text', value: text }] }),
    );
    expect(large.status, large.text.slice(0, 300)).toBe(404);
  }, 120_000);

  it('a body that never finishes arriving is answered 408 and let go; a page form without a session is answered before its body', async () => {
    const { host } = new URL(server.url);
    // 10 bytes of the 1,000 announced, then nothing: Fastify's default waited for ever.
    const stalled = sendRaw(
      server.url,
      `POST /services/rest/transactions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${auth}\r\n` +
        `Content-Type: application/xml\r\nContent-Length: 1000\r\n\r\n`,
      '<pal:trans',
    );
    const timedOut = await stalled.answer;
    expect(timedOut.status, timedOut.text).toBe(408);
    expect(timedOut.text).toContain('<type>REQUEST_TIMEOUT</type>');

    // A session page's form, no cookie, 1 MB announced and 100 bytes sent: 401 at once, not a
    // 408 once the timeout has passed (the body was not waited for); and the connection let go
    // with the answer (no 408 after it), though the client did not ask for that.
    const pagePost = sendRaw(
      server.url,
      `POST /services/session/AAAAAAAAAAAA HTTP/1.1\r\nHost: ${host}\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000\r\n\r\n`,
      `csrf=x&action=send&text=${'a'.repeat(70)}`,
    );
    const page = await pagePost.answer;
    expect(page.status, page.text.slice(0, 300)).toBe(401);
    expect(page.text).toContain('<!doctype html>');
    expect(page.text).not.toContain('REQUEST_TIMEOUT');
    // The same for the API's 401 to wrong credentials.
    const apiPost = sendRaw(
      server.url,
      `POST /services/rest/transactions HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Basic eDp5\r\n` +
        `Content-Type: application/xml\r\nContent-Length: 1000000\r\n\r\n`,
      '<pal:transactionContent',
    );
    const api = await apiPost.answer;
    expect(api.status, api.text.slice(0, 300)).toBe(401);
    expect(api.text).not.toContain('REQUEST_TIMEOUT');
    // And any answer given before its body arrived: a body sent to a path that takes none (404),
    // let go with its answer, well before the timeout would have ended it.
    const started = Date.now();
    const stray = sendRaw(
      server.url,
      `POST /services/nothing-here HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n` +
        `Content-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n`,
      'x'.repeat(100),
    );
    const unknown = await stray.answer;
    expect(unknown.status, unknown.text.slice(0, 300)).toBe(404);
    expect(unknown.text).not.toContain('REQUEST_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(4000);
    // But a request without a body keeps its connection, however soon it is answered: two
    // requests of a browser (a 404, then /healthz) pipelined on one connection get two answers.
    const pipelined = sendRaw(
      server.url,
      `GET /favicon.ico HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
    );
    const both = await pipelined.answer;
    expect(both.status).toBe(404);
    expect(both.text).toContain('HTTP/1.1 200 OK');
    expect(both.text).toContain('{"status":"ok"}');
  }, 60_000);
});
