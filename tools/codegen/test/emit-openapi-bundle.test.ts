/** Given a model, want this OpenAPI: the mappings of emit/openapi-bundle.ts, case by case. */
import { describe, expect, it } from 'vitest';
import { componentSchema, emitOpenApiBundle, memberSchema } from '../src/emit/openapi-bundle.js';
import type { ApiModel } from '../src/model/operation-model.js';
import type { SchemaModel, TypeModel } from '../src/model/schema-model.js';
import { member } from './model-builders.js';

const item: TypeModel = {
  kind: 'object',
  name: 'Item',
  namespace: 'urn:t',
  source: 't.xsd',
  ownMembers: [member({ name: 'id', optional: true }), member({ name: 'count' })],
  members: [
    member({ name: 'id', optional: true }),
    member({ name: 'count', type: { kind: 'builtin', name: 'int' } }),
  ],
};
const model: SchemaModel = {
  files: [],
  types: [item],
  roots: [{ name: 'item', namespace: 'urn:t', type: { kind: 'named', name: 'Item' } }],
};

describe('emit/openapi-bundle', () => {
  it.each([
    { given: member({}), want: { type: 'string' } },
    {
      given: member({ type: { kind: 'builtin', name: 'int' } }),
      want: { type: 'integer', format: 'int32' },
    },
    {
      given: member({ type: { kind: 'builtin', name: 'unsignedShort' } }),
      want: { type: 'integer', format: 'int32', minimum: 0, maximum: 65535 },
    },
    {
      given: member({ type: { kind: 'builtin', name: 'base64Binary' } }),
      want: { type: 'string', format: 'byte' },
    },
    { given: member({ list: true }), want: { type: 'array', items: { type: 'string' } } },
    { given: member({ nillable: true }), want: { type: 'string', nullable: true } },
    {
      given: member({ type: { kind: 'named', name: 'Item' }, nillable: true }),
      want: { allOf: [{ $ref: '#/components/schemas/Item' }], nullable: true },
    },
    { given: member({ doc: 'Why.' }), want: { type: 'string', description: 'Why.' } },
    { given: member({ maxLength: 7 }), want: { type: 'string', maxLength: 7 } },
    {
      given: member({ maxLength: 7, list: true }),
      want: { type: 'array', items: { type: 'string', maxLength: 7 } },
    },
  ])('member $given.type.name (list $given.list, nillable $given.nillable)', ({ given, want }) => {
    expect(memberSchema(given)).toEqual(want);
  });

  it.each([
    {
      given: item,
      want: {
        type: 'object',
        properties: { id: { type: 'string' }, count: { type: 'integer', format: 'int32' } },
        required: ['count'],
        additionalProperties: false,
        xml: { name: 'item', namespace: 'urn:t' },
      },
    },
    {
      given: {
        kind: 'enum',
        name: 'Kind',
        xsdName: 'kind',
        namespace: 'urn:t',
        source: 't.xsd',
        values: ['A', 'B'],
      },
      want: { type: 'string', enum: ['A', 'B'] },
    },
    {
      given: {
        kind: 'map',
        name: 'Labels',
        namespace: 'urn:t',
        source: 't.xsd',
        value: { kind: 'builtin', name: 'string' },
        doc: 'Names.',
      },
      want: { type: 'object', additionalProperties: { type: 'string' }, description: 'Names.' },
    },
    {
      given: {
        kind: 'array',
        name: 'ItemList',
        namespace: 'urn:t',
        source: 't.xsd',
        itemElement: 'item',
        item: { kind: 'named', name: 'Item' },
      },
      want: { type: 'array', items: { $ref: '#/components/schemas/Item' } },
    },
  ] satisfies { given: TypeModel; want: unknown }[])(
    'type $given.kind $given.name',
    ({ given, want }) => {
      expect(componentSchema(given, model)).toEqual(want);
    },
  );

  it("states a search header's maxLength from the model, at its $ref or inline", () => {
    const header = (name: string) => ({ name, in: 'header', schema: { type: 'string' } });
    const api: ApiModel = {
      file: 'nowhere.yaml',
      document: {
        paths: {
          '/svc/items': {
            get: { parameters: [{ $ref: '#/components/parameters/Name' }, header('category')] },
          },
        },
        components: { parameters: { Name: header('name') } },
      },
      roots: { service: 'svc', user: 'usr' },
      operations: [
        {
          id: 'searchItems',
          specId: 'X1',
          tag: 'items',
          summary: 'Search',
          method: 'GET',
          root: 'service',
          path: '/items',
          openapiPath: '/svc/items',
          pathParams: [],
          queryParams: [],
          search: {
            type: 'ItemSearch',
            headers: [
              { name: 'name', type: 'string', required: false, maxLength: 10 },
              { name: 'category', type: 'string', required: false, maxLength: 20 },
            ],
          },
          response: { kind: 'list', itemType: 'Item', root: 'itemList' },
          totalCountHeader: true,
        },
      ],
    };
    const { document } = emitOpenApiBundle(api, model);
    const components = document.components as { parameters: Record<string, unknown> };
    expect(components.parameters.Name).toEqual({
      name: 'name',
      in: 'header',
      schema: { type: 'string', maxLength: 10 },
    });
    const paths = document.paths as Record<string, { get: { parameters: unknown[] } }>;
    expect(paths['/svc/items']!.get.parameters[1]).toEqual({
      name: 'category',
      in: 'header',
      schema: { type: 'string', maxLength: 20 },
    });
    // The model's document is not touched.
    expect(
      (api.document.components as { parameters: { Name: { schema: object } } }).parameters.Name
        .schema,
    ).toEqual({ type: 'string' });
  });

  it('builds the bundle from the models alone: the document as loaded plus derived schemas', () => {
    const document = {
      openapi: '3.0.3',
      paths: { '/svc/items': {} },
      components: { parameters: { P: { name: 'p', in: 'header' } } },
    };
    const api: ApiModel = {
      // No such file: the emitter must not read one.
      file: 'nowhere.yaml',
      document,
      roots: { service: 'svc', user: 'usr' },
      operations: [],
    };
    const before = structuredClone(document);
    const { document: bundle } = emitOpenApiBundle(api, model);
    expect(bundle).toEqual({
      openapi: '3.0.3',
      paths: { '/svc/items': {} },
      components: {
        schemas: { Item: componentSchema(item, model) },
        parameters: { P: { name: 'p', in: 'header' } },
      },
    });
    expect(Object.keys(bundle.components as object)).toEqual(['schemas', 'parameters']);
    expect(document).toEqual(before);
  });
});
