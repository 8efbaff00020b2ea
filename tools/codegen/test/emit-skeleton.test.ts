/** Given operations, want this route table: the mappings of emit/skeleton.ts, case by case. */
import { describe, expect, it } from 'vitest';
import { defaultContext } from '../src/context.js';
import { paramSpecs, emitSkeleton } from '../src/emit/skeleton.js';
import type { ApiModel, ParamModel } from '../src/model/operation-model.js';

describe('emit/skeleton', () => {
  it.each([
    {
      given: { name: 'id', type: 'string', required: true, maxLength: 200 },
      want: [{ name: 'id', type: 'string', required: true, maxLength: 200 }],
    },
    {
      given: { name: 'flag', type: 'boolean', required: false, description: 'Not in the table.' },
      want: [{ name: 'flag', type: 'boolean', required: false }],
    },
    {
      given: { name: 'view', type: 'string', required: true, enum: ['summary', 'full'] },
      want: [{ name: 'view', type: 'string', required: true, enum: ['summary', 'full'] }],
    },
  ] satisfies { given: ParamModel; want: unknown }[])('param $given.name', ({ given, want }) => {
    expect(JSON.parse(paramSpecs([given]))).toEqual(want);
  });

  it('emits the default roots of the OpenAPI document into the route table', () => {
    const api: ApiModel = {
      file: 'x.yaml',
      document: {},
      roots: { service: 'svc', user: 'usr' },
      operations: [
        {
          id: 'getItem',
          specId: 'X1',
          tag: 'items',
          summary: 'Get',
          method: 'GET',
          root: 'service',
          path: '/items/{id}',
          openapiPath: '/svc/items/{id}',
          pathParams: [{ name: 'id', type: 'string', required: true, maxLength: 9 }],
          queryParams: [
            { name: 'view', type: 'string', required: false, enum: ['summary', 'full'] },
          ],
          transportHeaders: [
            { name: 'Idempotency-Key', type: 'string', required: false, maxLength: 255 },
          ],
          response: { kind: 'simple', type: 'string', root: 'string' },
          totalCountHeader: false,
        },
      ],
    };
    const files = emitSkeleton(defaultContext('/nowhere'), api, { document: {} });
    const table = files.find((f) => f.path.endsWith('/operations.gen.ts'))!.content;
    expect(table).toContain(`export const defaultRoots = {"service":"svc","user":"usr"} as const;`);
    expect(table).toContain(`path: "/items/:id"`);
    expect(table).toContain(
      `pathParams: [{"name":"id","type":"string","required":true,"maxLength":9}]`,
    );
    // Read by the server around the operation: in the table, not in the handler's input.
    expect(table).toContain(
      `transportHeaders: [{"name":"Idempotency-Key","type":"string","required":false,"maxLength":255}]`,
    );
    const inputs = files.find((f) => f.path.endsWith('/handlers.gen.ts'))!.content;
    expect(inputs).not.toContain('Idempotency');
    // An enum parameter is the union of its values, to the handler as to the runtime.
    expect(inputs).toContain(`query: { view?: "summary" | "full" }`);
  });
});
