import { DecodeError, decodeXml } from '@pal-workflow/validators';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeError, errorResult, sendError } from './error-result.js';
import { HttpError } from './http-error.js';

const INTERNAL = {
  status: 500,
  code: 'INTERNAL',
  messages: ['internal error: the server logged it with the request id'],
  headers: {},
};

describe('describeError', () => {
  it.each([
    {
      given: new DecodeError([
        { path: 'palInfo.deployed', message: 'expected true or false' },
        { path: '', message: 'a DOCTYPE is not allowed' },
      ]),
      want: {
        status: 400,
        code: 'INVALID_ARGUMENT',
        messages: ['palInfo.deployed: expected true or false', 'a DOCTYPE is not allowed'],
        headers: {},
      },
    },
    {
      given: new HttpError(404, 'NOT_FOUND', 'no pal "x"'),
      want: { status: 404, code: 'NOT_FOUND', messages: ['no pal "x"'], headers: {} },
    },
    {
      given: new HttpError(429, 'RATE_LIMITED', 'slow down', { 'Retry-After': '60' }),
      want: {
        status: 429,
        code: 'RATE_LIMITED',
        messages: ['slow down'],
        headers: { 'Retry-After': '60' },
      },
    },
    {
      // An app's own error class: a numeric status and a stable code are enough.
      given: Object.assign(new Error('e-mail in use'), { statusCode: 409, code: 'CONFLICT' }),
      want: { status: 409, code: 'CONFLICT', messages: ['e-mail in use'], headers: {} },
    },
    {
      given: Object.assign(new Error('gone'), { status: 410 }),
      want: { status: 410, code: 'GONE', messages: ['gone'], headers: {} },
    },
    {
      // Fastify's codes become the status they mean, with the code of that status.
      given: Object.assign(new Error('Request body is too large'), {
        code: 'FST_ERR_CTP_BODY_TOO_LARGE',
        statusCode: 413,
      }),
      want: {
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        messages: ['Request body is too large'],
        headers: {},
      },
    },
    {
      given: Object.assign(new Error('Unsupported Media Type'), {
        code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
      }),
      want: {
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
        // Fastify's words name nothing: the message says what would be read.
        messages: [
          'a body needs a Content-Type this service reads: application/xml, text/xml, application/json, application/x-www-form-urlencoded or multipart/form-data',
        ],
        headers: {},
      },
    },
    {
      // A 4xx without a code of its own, and none for its status: still a client error.
      given: Object.assign(new Error("I'm a teapot"), { statusCode: 418 }),
      want: { status: 418, code: 'INVALID_ARGUMENT', messages: ["I'm a teapot"], headers: {} },
    },
    {
      given: Object.assign(new Error('the mail server refused'), {
        statusCode: 502,
        code: 'MAIL_FAILED',
      }),
      want: {
        status: 502,
        code: 'MAIL_FAILED',
        messages: ['the mail server refused'],
        headers: {},
      },
    },
    // Faults: nothing of them reaches the caller.
    { given: new Error('database is locked'), want: INTERNAL },
    { given: Object.assign(new Error('x'), { statusCode: 502 }), want: INTERNAL },
    {
      given: Object.assign(new Error('x'), { statusCode: 503, code: 'FST_ERR_X' }),
      want: INTERNAL,
    },
    { given: Object.assign(new Error('x'), { statusCode: 500, code: 'DB_DOWN' }), want: INTERNAL },
    { given: 'a thrown string', want: INTERNAL },
    { given: undefined, want: INTERNAL },
    { given: null, want: INTERNAL },
  ])('$given → $want.status $want.code', ({ given, want }) => {
    expect(describeError(given)).toEqual(want);
  });
});

describe('errorResult', () => {
  it('types every message with the code', () => {
    expect(
      errorResult({ status: 400, code: 'INVALID_ARGUMENT', messages: ['a', 'b'], headers: {} }),
    ).toEqual({
      success: false,
      messages: [
        { message: 'a', type: 'INVALID_ARGUMENT' },
        { message: 'b', type: 'INVALID_ARGUMENT' },
      ],
    });
  });
});

describe('sendError, on a real Fastify instance', () => {
  let app: FastifyInstance;
  const logged: unknown[] = [];

  beforeAll(async () => {
    app = Fastify({ logger: false });
    app.addHook('onRequest', async (request) => {
      request.log.error = (...args: unknown[]) => void logged.push(args);
    });
    const errors: Record<string, unknown> = {
      unauthorized: new HttpError(401, 'UNAUTHORIZED', 'wrong credentials'),
      challenged: new HttpError(401, 'UNAUTHORIZED', 'no', { 'WWW-Authenticate': 'Bearer' }),
      limited: new HttpError(429, 'RATE_LIMITED', 'wait', { 'Retry-After': '7' }),
      fault: new Error('secret detail'),
    };
    app.get('/:name', async (request, reply) =>
      sendError(request, reply, errors[(request.params as { name: string }).name]),
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it('answers XML unless JSON is accepted, with the status and the code', async () => {
    const xml = await app.inject({ url: '/unauthorized' });
    expect(xml.statusCode).toBe(401);
    expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(decodeXml(xml.body, 'errorResult')).toEqual({
      success: false,
      messages: [{ message: 'wrong credentials', type: 'UNAUTHORIZED' }],
    });
    const json = await app.inject({
      url: '/unauthorized',
      headers: { accept: 'application/json' },
    });
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(json.body)).toEqual({
      success: false,
      messages: [{ message: 'wrong credentials', type: 'UNAUTHORIZED' }],
    });
    const neither = await app.inject({ url: '/unauthorized', headers: { accept: 'text/csv' } });
    expect(neither.headers['content-type']).toBe('application/xml; charset=utf-8');
  });

  it('adds the Basic challenge to a 401 that has none, and passes on the headers an error carries', async () => {
    expect((await app.inject({ url: '/unauthorized' })).headers['www-authenticate']).toBe(
      'Basic realm="pal"',
    );
    expect((await app.inject({ url: '/challenged' })).headers['www-authenticate']).toBe('Bearer');
    expect((await app.inject({ url: '/limited' })).headers['retry-after']).toBe('7');
  });

  it('logs a fault and tells the caller nothing of it', async () => {
    const answer = await app.inject({ url: '/fault', headers: { accept: 'application/json' } });
    expect(answer.statusCode).toBe(500);
    expect(answer.body).not.toContain('secret detail');
    expect(JSON.parse(answer.body).messages[0].type).toBe('INTERNAL');
    expect(logged).toHaveLength(1);
  });
});
