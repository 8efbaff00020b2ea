/** Given a small OpenAPI document, want this operation model: the mappings of load/openapi.ts. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { Diagnostics } from '../src/diagnostics.js';
import { loadApi } from '../src/load/openapi.js';
import type { SchemaModel } from '../src/model/schema-model.js';

const dir = mkdtempSync(join(tmpdir(), 'load-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Just enough of an XSD model for the operations below: a root `item` of type Item, and a
// search type whose `name` is limited.
const nameFilter = {
  name: 'name',
  type: { kind: 'builtin', name: 'string' },
  optional: true,
  list: false,
  nillable: false,
  maxLength: 50,
} as const;
const model: SchemaModel = {
  files: [{ file: 't.xsd', namespace: 'urn:t', prefix: 't', version: '1.0' }],
  types: [
    {
      kind: 'object',
      name: 'Item',
      namespace: 'urn:t',
      source: 't.xsd',
      ownMembers: [],
      members: [],
    },
    {
      kind: 'object',
      name: 'ItemSearch',
      namespace: 'urn:t',
      source: 't.xsd',
      ownMembers: [nameFilter],
      members: [nameFilter],
    },
  ],
  roots: [{ name: 'item', namespace: 'urn:t', type: { kind: 'named', name: 'Item' } }],
};

const ITEM_RESPONSE = {
  '200': {
    description: 'ok',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
  },
};

function load(document: Record<string, unknown>) {
  const path = join(dir, `t${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, YAML.stringify(document));
  const diagnostics = new Diagnostics();
  return { api: loadApi(path, model, diagnostics), diagnostics, path };
}

/** A document with one GET operation at `path` taking `parameters`. */
function oneOperation(
  path: string,
  parameters: unknown[],
  roots: unknown = { service: 'svc', user: 'usr' },
) {
  return {
    openapi: '3.0.3',
    'x-roots': roots,
    paths: {
      [path]: {
        get: { operationId: 'getItem', 'x-spec-id': 'X1', parameters, responses: ITEM_RESPONSE },
      },
    },
  };
}

describe('load/openapi', () => {
  it.each([
    {
      given: { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 200 } },
      want: { name: 'id', type: 'string', required: true, maxLength: 200 },
    },
    {
      given: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      want: { name: 'id', type: 'string', required: true },
    },
    {
      given: { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
      want: { name: 'id', type: 'int', required: true },
    },
    {
      given: {
        name: 'id',
        in: 'path',
        required: true,
        schema: { type: 'string', enum: ['a', 'b'] },
      },
      want: { name: 'id', type: 'string', required: true, enum: ['a', 'b'] },
    },
  ])('reads a path parameter: $given.schema', ({ given, want }) => {
    const { api, diagnostics } = load(oneOperation('/svc/rest/items/{id}', [given]));
    expect(diagnostics.format()).toBe('');
    expect(api.operations[0]!.pathParams).toEqual([want]);
  });

  it.each([
    {
      given: { type: 'string', maxLength: 0 },
      want: 'error OAS021 t.yaml#getItem id: maxLength must be a positive integer on a string',
    },
    {
      given: { type: 'boolean', maxLength: 5 },
      want: 'error OAS021 t.yaml#getItem id: maxLength must be a positive integer on a string',
    },
    {
      given: { type: 'array' },
      want: 'error OAS020 t.yaml#getItem id: parameter type array is not supported',
    },
    ...[
      { type: 'integer', enum: [1, 2] },
      { type: 'string', enum: [] },
      { type: 'string', enum: ['a', 'a'] },
    ].map((given) => ({
      given,
      want: 'error OAS022 t.yaml#getItem id: enum must be a list of distinct strings on a string',
    })),
  ])('reports a bad parameter schema: $given', ({ given, want }) => {
    const { diagnostics } = load(
      oneOperation('/svc/rest/items/{id}', [
        { name: 'id', in: 'path', required: true, schema: given },
      ]),
    );
    expect(diagnostics.format().replace(/t\w+\.yaml/, 't.yaml')).toBe(want);
  });

  it.each([
    { path: '/svc/rest/items', want: { root: 'service', path: '/rest/items' } },
    { path: '/usr/items', want: { root: 'user', path: '/items' } },
  ])('reads the root of $path from x-roots', ({ path, want }) => {
    const { api, diagnostics } = load(oneOperation(path, []));
    expect(diagnostics.format()).toBe('');
    expect(api.roots).toEqual({ service: 'svc', user: 'usr' });
    expect({ root: api.operations[0]!.root, path: api.operations[0]!.path }).toEqual(want);
  });

  it.each([
    { roots: null, want: /OAS031 .*x-roots\.service must be one path segment, got ""/ },
    { roots: { service: 'a/b', user: 'u' }, want: /OAS031 .*x-roots\.service must be one path/ },
    { roots: { service: 'same', user: 'same' }, want: /OAS031 .*must differ/ },
    {
      roots: { service: 'svc', user: 'usr' },
      path: '/other/x',
      want: /OAS030 .*\/svc\/ or \/usr\//,
    },
  ])('refuses roots $roots with a diagnostic', ({ roots, path, want }) => {
    const { diagnostics } = load(oneOperation(path ?? '/svc/x', [], roots));
    expect(diagnostics.hasErrors).toBe(true);
    expect(diagnostics.format('error')).toMatch(want);
  });

  it.each([
    { given: { type: 'string' }, want: { maxLength: 50 }, error: '' },
    { given: { type: 'string', maxLength: 50 }, want: { maxLength: 50 }, error: '' },
    { given: { type: 'string', maxLength: 60 }, want: { maxLength: 60 }, error: 'OAS043' },
  ])("a search header takes its search member's maxLength: $given", ({ given, want, error }) => {
    const document = oneOperation('/svc/rest/items', [
      { name: 'name', in: 'header', required: false, schema: given },
    ]);
    (document.paths['/svc/rest/items']!.get as Record<string, unknown>)['x-search'] = 'ItemSearch';
    const { api, diagnostics } = load(document);
    expect(diagnostics.format('error')).toContain(error);
    expect(api.operations[0]!.search!.headers[0]).toMatchObject(want);
  });

  it('reads an x-transport header apart from the search headers, without x-search', () => {
    const { api, diagnostics } = load(
      oneOperation('/svc/rest/items', [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          'x-transport': true,
          schema: { type: 'string', maxLength: 255 },
        },
      ]),
    );
    expect(diagnostics.format()).toBe('');
    expect(api.operations[0]!.transportHeaders).toEqual([
      { name: 'Idempotency-Key', type: 'string', required: false, maxLength: 255 },
    ]);
    expect(api.operations[0]!.search).toBeUndefined();
  });

  it.each([
    {
      given: { name: 'flag', in: 'header', required: false, schema: { type: 'string' } },
      want: /OAS040 .*header parameters need x-search/,
    },
    {
      given: { name: 'q', in: 'query', 'x-transport': true, schema: { type: 'string' } },
      want: /OAS044 .* q: x-transport is for header parameters/,
    },
  ])(
    'refuses $given.name: a header without x-search or x-transport, x-transport off a header',
    ({ given, want }) => {
      const { diagnostics } = load(oneOperation('/svc/rest/items', [given]));
      expect(diagnostics.format('error')).toMatch(want);
    },
  );

  it.each([
    {
      name: 'a schema the XSDs do not have',
      ref: '#/components/schemas/Items',
      want: 'error OAS002 PATH#getItem: $ref #/components/schemas/Items: the XSDs have no type Items',
    },
    {
      name: 'a component the document does not have',
      ref: '#/components/responses/Missing',
      want: 'error OAS001 PATH#getItem: $ref #/components/responses/Missing: components.responses has no Missing',
    },
    {
      name: 'another file',
      ref: 'other.yaml#/Item',
      want: 'error OAS001 PATH#getItem: $ref other.yaml#/Item: only #/components/<section>/<name> is supported',
    },
  ])('names the operation of a $ref to $name', ({ ref, want }) => {
    const document = oneOperation('/svc/rest/items', []);
    const get = (document.paths['/svc/rest/items'] as { get: Record<string, unknown> }).get;
    get.responses = {
      '200': { description: 'ok', content: { 'application/json': { schema: { $ref: ref } } } },
    };
    const { diagnostics, path } = load(document);
    expect(diagnostics.format('error').split('\n')).toContain(
      want.replace('PATH', path.split('/').pop()!),
    );
  });

  it('says a $ref to nothing once, though JSON and XML content both hold it', () => {
    const document = oneOperation('/svc/rest/items', []);
    const schema = { $ref: '#/components/schemas/Items' };
    const content = { 'application/json': { schema }, 'application/xml': { schema } };
    const get = (document.paths['/svc/rest/items'] as { get: Record<string, unknown> }).get;
    get.responses = { '200': { description: 'ok', content } };
    const { diagnostics } = load(document);
    expect(diagnostics.items.map((d) => d.code)).toEqual(['OAS002']);
  });

  it('refuses a list whose items name no XSD type', () => {
    const document = oneOperation('/svc/rest/items', []);
    const schema = { type: 'array', items: { type: 'string' } };
    const get = (document.paths['/svc/rest/items'] as { get: Record<string, unknown> }).get;
    get.responses = { '200': { description: 'ok', content: { 'application/json': { schema } } } };
    const { diagnostics } = load(document);
    expect(diagnostics.format().replace(/t\w+\.yaml/, 't.yaml')).toBe(
      'error OAS011 t.yaml#getItem: the items of a list must be a $ref to an XSD type',
    );
  });

  it("refuses hand-written component schemas, which would replace the XSDs' own", () => {
    const document = {
      ...oneOperation('/svc/rest/items', []),
      components: { schemas: { Item: {} } },
    };
    const { diagnostics } = load(document);
    expect(diagnostics.format('error')).toMatch(
      /^error OAS003 t\w+\.yaml#components\.schemas: data types are written in the XSDs/,
    );
  });

  it('says where a file stops being YAML, without a stack', () => {
    const path = join(dir, 'broken.yaml');
    writeFileSync(path, 'openapi: 3.0.3\npaths:\n  /svc/items:\n    get: {\n  x: 1\n');
    const diagnostics = new Diagnostics();
    const api = loadApi(path, model, diagnostics);
    expect(diagnostics.items).toHaveLength(1);
    expect(diagnostics.format()).toMatch(/^error OAS000 broken\.yaml:\d+:\d+: not YAML: \S.*[^:]$/);
    expect(api.operations).toEqual([]);
  });

  it.each([
    {
      change: { operationId: 'getItem' },
      want: 'error OAS051 t.yaml#getItem: POST /svc/rest/other has the operationId of GET /svc/rest/items: each operation needs its own',
    },
    {
      change: { 'x-spec-id': 'X1' },
      want: 'error OAS051 t.yaml#postOther: POST /svc/rest/other has the x-spec-id of GET /svc/rest/items: each operation needs its own',
    },
  ])('refuses an id two operations share: $want', ({ change, want }) => {
    const document = oneOperation('/svc/rest/items', []);
    (document.paths as Record<string, unknown>)['/svc/rest/other'] = {
      post: { operationId: 'postOther', 'x-spec-id': 'X2', responses: ITEM_RESPONSE, ...change },
    };
    const { diagnostics } = load(document);
    expect(diagnostics.format().replace(/t\w+\.yaml/, 't.yaml')).toBe(want);
  });

  it('keeps the document as read', () => {
    const document = oneOperation('/svc/rest/items', []);
    const { api } = load(document);
    expect(api.document).toEqual(document);
  });
});
