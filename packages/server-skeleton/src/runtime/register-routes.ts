/**
 * The Fastify plugin that serves every operation of the route table: it reads path
 * parameters, search headers, query strings, forms and XML/JSON bodies into typed
 * inputs, negotiates the response format before the handler runs, calls the app's
 * handler and writes the result; every failure becomes an errorResult.
 */
import {
  decodeJson,
  decodeXml,
  encodeJson,
  encodeXml,
  checkWellFormedDocument,
  type RootName,
  type RootValues,
} from '@pal-workflow/validators';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Handlers } from '../generated/handlers.gen.js';
import { defaultRoots, operations, type OperationId } from '../generated/operations.gen.js';
import { readParams, readSearch, type RawValues } from './coerce.js';
import { sendError } from './error-result.js';
import {
  DEFAULT_FORM_BODY_LIMIT,
  DEFAULT_FORM_LIMITS,
  parseMultipart,
  parseUrlEncoded,
  type FormLimits,
} from './forms.js';
import { isImmutable } from './frozen.js';
import { requireUtf8Charset, utf8Body } from './utf8-body.js';
import { checkBodyItems, DEFAULT_BODY_ITEM_LIMIT } from './body-items.js';
import { checkJsonObject } from './json-document.js';
import { badRequest, HttpError, notAcceptable } from './http-error.js';
import { negotiate, negotiateMediaType, type Format } from './negotiate.js';
import type { AnyDocument, OperationSpec, Page } from './operation-spec.js';

export interface RegisterRoutesOptions<Ctx> {
  handlers: Handlers<Ctx>;
  /**
   * The authentication slot: runs before the body is read. Return the context the
   * handlers receive, or throw (an HttpError 401 gets `WWW-Authenticate`).
   */
  authenticate: (request: FastifyRequest) => Ctx | Promise<Ctx>;
  /** First path segment of the console, transactions, enterprise and pals areas. */
  serviceRoot?: string;
  /** First path segment of the user service. */
  userRoot?: string;
  /** Largest accepted XML or JSON body in bytes (default 25 MiB). */
  bodyLimit?: number;
  /**
   * Largest accepted form body in bytes, urlencoded or multipart (default 64 KiB, and never more
   * than `bodyLimit`): forms carry ids, names and addresses.
   */
  formBodyLimit?: number;
  /** Fields and file parts a form may hold (default 100 and 10); more answer 413. */
  formLimits?: FormLimits;
  /**
   * Elements of an XML body, or values of a JSON one, counted before it is parsed (default
   * 100,000); more answer 413.
   */
  bodyItemLimit?: number;
}

/**
 * The longest path parameter any operation takes (the largest maxLength of the route table): a
 * router must pass at least that on, so the operation can judge it and name the parameter.
 */
export const maxPathParamLength = Math.max(
  0,
  ...Object.values(operations).flatMap((op: OperationSpec) =>
    op.pathParams.map((p) => p.maxLength ?? 0),
  ),
);

/** What an operation's route carries in its Fastify route config. */
interface OperationRouteConfig {
  operationId: OperationId;
}

/**
 * The operation a request was routed to, or undefined when it is not one of the operations (a
 * route of the app's own, or none): for hooks of the app that treat operations apart.
 */
export function operationOf(request: FastifyRequest): OperationId | undefined {
  const config = request.routeOptions.config as Partial<OperationRouteConfig> | undefined;
  return config?.operationId;
}

type ReceivedBody = { kind: 'xml' | 'json'; text: string } | { kind: 'form'; fields: RawValues };

const CONTEXT = Symbol('palContext');
type PalRequest = FastifyRequest & { [CONTEXT]?: unknown };

export async function registerRoutes<Ctx>(
  app: FastifyInstance,
  options: RegisterRoutesOptions<Ctx>,
): Promise<void> {
  const serviceRoot = options.serviceRoot ?? defaultRoots.service;
  const userRoot = options.userRoot ?? defaultRoots.user;
  const bodyLimit = options.bodyLimit ?? 25 * 1024 * 1024;
  const formBodyLimit = Math.min(options.formBodyLimit ?? DEFAULT_FORM_BODY_LIMIT, bodyLimit);
  const formLimits = options.formLimits ?? DEFAULT_FORM_LIMITS;
  const bodyItemLimit = options.bodyItemLimit ?? DEFAULT_BODY_ITEM_LIMIT;

  await app.register(async (scope) => {
    // A decoration: every request is made with its place for the context, and keeps one shape.
    scope.decorateRequest(CONTEXT, null);
    scope.removeAllContentTypeParsers();
    // Read as bytes and decoded here: Fastify's string would put U+FFFD for bytes that are not
    // UTF-8, and the body would reach the operation changed.
    const textBodies: [string[], 'xml' | 'json'][] = [
      [['application/xml', 'text/xml'], 'xml'],
      [['application/json'], 'json'],
    ];
    for (const [types, kind] of textBodies)
      scope.addContentTypeParser(types, { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
        let text: string;
        try {
          text = utf8Body(request, body as unknown as Buffer, kind);
          checkBodyItems(text, kind, bodyItemLimit);
        } catch (error) {
          done(error as Error);
          return;
        }
        done(null, { kind, text } satisfies ReceivedBody);
      });
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'buffer', bodyLimit: formBodyLimit },
      (request, body, done) => {
        let fields: RawValues;
        try {
          requireUtf8Charset(request);
          fields = parseUrlEncoded(body as unknown as Buffer, formLimits);
        } catch (error) {
          done(error as Error);
          return;
        }
        done(null, { kind: 'form', fields } satisfies ReceivedBody);
      },
    );
    // Read whole under the body limit like every other body, then parsed by the platform's own
    // multipart parser (undici's Response.formData). @fastify/multipart streamed the raw request
    // past Fastify's limit: a multipart body of any size was read, and a field over its fieldSize
    // was silently truncated instead of answering 413.
    scope.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: formBodyLimit },
      (request, body, done) => {
        try {
          requireUtf8Charset(request);
        } catch (error) {
          done(error as Error);
          return;
        }
        parseMultipart(String(request.headers['content-type']), body as Buffer, formLimits).then(
          (fields) => done(null, { kind: 'form', fields } satisfies ReceivedBody),
          (error: unknown) => done(error as Error),
        );
      },
    );

    scope.setErrorHandler((error, request, reply) => sendError(request, reply, error));
    // Bodies are read as sent: a compressed one would reach a parser as bytes it cannot read, and
    // one labelled compressed and sent plain was taken. Refused before it is read.
    scope.addHook('preParsing', (request, _reply, payload, done) => {
      const coding = request.headers['content-encoding'];
      if (coding === undefined || /^\s*identity\s*$/i.test(coding) || !hasBody(request))
        return done(null, payload);
      done(
        new HttpError(
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `Content-Encoding "${coding.slice(0, 64)}": bodies are taken without a content coding; send it uncompressed`,
        ),
      );
    });
    // Callback style, so an authenticator that answers at once (a cached credential) costs no promise.
    scope.addHook('onRequest', (request, _reply, done) => {
      let result: Ctx | Promise<Ctx>;
      try {
        result = options.authenticate(request);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (result instanceof Promise)
        result.then(
          (ctx) => {
            (request as PalRequest)[CONTEXT] = ctx;
            done();
          },
          (error: unknown) => done(error as Error),
        );
      else {
        (request as PalRequest)[CONTEXT] = result;
        done();
      }
    });

    for (const id of Object.keys(operations) as OperationId[]) {
      const spec: OperationSpec = operations[id];
      const root = spec.root === 'service' ? serviceRoot : userRoot;
      scope.route({
        method: spec.method,
        url: `/${root}${spec.path}`,
        config: { operationId: id } satisfies OperationRouteConfig,
        handler: async (request, reply) => {
          const mediaType = negotiateMediaType(
            request.headers.accept,
            spec.response.kind === 'simple',
          );
          if (!mediaType) throw notAcceptable(request.headers.accept ?? '');
          const format = negotiate(request.headers.accept, spec.response.kind === 'simple')!;
          const input = readInput(spec, request as PalRequest);
          const handler = options.handlers[id] as (input: unknown, ctx: Ctx) => Promise<unknown>;
          const output = await handler.call(
            options.handlers,
            input,
            (request as PalRequest)[CONTEXT] as Ctx,
          );
          let value = output;
          if (spec.response.kind === 'list' && spec.response.totalCount) {
            const page = output as Page<unknown>;
            reply.header('X-Total-Count', String(page.total));
            if (page.totalRelation === 'gte') reply.header('X-Total-Count-Relation', 'gte');
            value = page.items;
          }
          return reply
            .code(200)
            .type(`${mediaType}; charset=utf-8`)
            .send(writeValue(format, spec.response.root, value));
        },
      });
    }
  });
}

function readInput(spec: OperationSpec, request: PalRequest): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const body = receivedBody(request);
  if (spec.pathParams.length)
    input.params = readParams(spec.pathParams, request.params as RawValues, 'path parameter');
  // A form is read as the operation's form fields, its query parameters, or both (U1); a form
  // sent to an operation that takes a body and no parameters is a 415 below instead.
  if (body?.kind === 'form' && (spec.form || spec.queryParams.length || !spec.body))
    refuseUnknownFields(spec, body.fields);
  if (spec.queryParams.length) {
    // Query parameters may also come as form fields (docs/decisions.md, "Wire format"; U1); one
    // given in both is given twice.
    const query = request.query as RawValues;
    input.query = readParams(
      spec.queryParams,
      body?.kind === 'form' ? mergeParams(body.fields, query) : query,
      'parameter',
    );
  }
  if (spec.search)
    input.search = readSearch(
      spec.search.headers,
      request.headers as RawValues,
      () => request.raw.headersDistinct,
    );
  if (spec.form) {
    if (body && body.kind !== 'form')
      throw new HttpError(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'this operation takes a form: application/x-www-form-urlencoded or multipart/form-data',
      );
    input.form = readParams(spec.form.fields, body?.fields ?? {}, 'form field');
  }
  if (spec.body) {
    if (!body || (body.kind === 'form' && spec.queryParams.length)) {
      if (spec.body.required) throw badRequest('a request body is required');
    } else if (body.kind === 'form') {
      throw new HttpError(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'this operation takes an application/xml or application/json body',
      );
    } else if (spec.body.kind === 'typed') {
      input.body =
        body.kind === 'xml'
          ? decodeXml(body.text, spec.body.root)
          : decodeJson(spec.body.root, body.text);
    } else {
      if (body.kind === 'xml') checkWellFormedDocument(body.text);
      else checkJsonObject(body.text);
      input.body = {
        text: body.text,
        contentType: body.kind === 'xml' ? 'application/xml' : 'application/json',
      } satisfies AnyDocument;
    }
  } else if (body && body.kind !== 'form' && !spec.form) {
    throw badRequest('this operation takes no request body');
  }
  return input;
}

/**
 * A form field the operation does not take is a 400, as an unknown member of an XML or JSON body
 * is (DESIGN: "unknown member"): a misspelt `useEnterpriseprofile` was dropped, and C3 gave the
 * grant under the other profile. The operation's query parameters may come as fields too.
 */
function refuseUnknownFields(spec: OperationSpec, fields: RawValues): void {
  for (const name of Object.keys(fields))
    if (
      !spec.form?.fields.some((field) => field.name === name) &&
      !spec.queryParams.some((param) => param.name === name)
    )
      throw badRequest(`unknown form field "${name.slice(0, 64)}"`);
}

/** Form fields and query parameters as one set; a name in both has both values (an array). */
function mergeParams(form: RawValues, query: RawValues): RawValues {
  // No prototype: a parameter may be named __proto__.
  const merged = Object.assign(Object.create(null) as RawValues, form);
  for (const [name, value] of Object.entries(query)) {
    const earlier = Object.hasOwn(form, name) ? form[name] : undefined;
    merged[name] =
      earlier === undefined || value === undefined ? (value ?? earlier) : [earlier, value].flat();
  }
  return merged;
}

function receivedBody(request: PalRequest): ReceivedBody | undefined {
  const raw = request.body as ReceivedBody | Record<string, unknown> | undefined;
  if (raw === undefined || raw === null) return undefined;
  const body = raw as ReceivedBody;
  // An empty XML or JSON body is no body: clients send a Content-Type on an empty POST
  // (the generated client does for U1 without a ServiceRequest).
  if (body.kind !== 'form' && body.text.trim() === '') return undefined;
  return body;
}

/** The bytes immutable values were written as (frozen.ts), by format and root. */
const written = new WeakMap<object, Map<string, string>>();

function writeValue(format: Format, root: RootName, value: unknown): string {
  if (typeof value !== 'object' || value === null || !isImmutable(value))
    return encode(format, root, value);
  let texts = written.get(value);
  if (texts === undefined) written.set(value, (texts = new Map()));
  const key = `${format} ${root}`;
  let text = texts.get(key);
  if (text === undefined) texts.set(key, (text = encode(format, root, value)));
  return text;
}

function encode(format: Format, root: RootName, value: unknown): string {
  switch (format) {
    case 'xml':
      return encodeXml(root, value as RootValues[typeof root]);
    case 'json':
      return encodeJson(root, value as RootValues[typeof root]);
    case 'text':
      return String(value);
  }
}

/** Whether a request comes with a body (a Content-Length above 0, or chunks). */
function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}
