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

  it('keeps the document as read', () => {
    const document = oneOperation('/svc/rest/items', []);
    const { api } = load(document);
    expect(api.document).toEqual(document);
  });
});
