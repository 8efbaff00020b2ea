/** The bundled OpenAPI document: valid OpenAPI 3.0, 27 operations, and one type source (the XSDs). */
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { openApiDocument, operations } from '../src/index.js';

describe('the bundled OpenAPI document', () => {
  it('validates as OpenAPI 3.0', async () => {
    const api = await SwaggerParser.validate(structuredClone(openApiDocument) as never);
    expect(api.info.title).toBe('Pal Workflow Services');
  });

  it('has the 27 operations of the route table, with their spec numbers', () => {
    const ids: string[] = [];
    for (const item of Object.values(openApiDocument.paths))
      for (const op of Object.values(item as Record<string, { operationId: string }>))
        ids.push(op.operationId);
    expect(ids.sort()).toEqual(Object.keys(operations).sort());
    expect(new Set(Object.values(operations).map((o) => o.specId)).size).toBe(27);
  });

  it('derives every component schema from the XSDs, including maps and nillable members', () => {
    const schemas = openApiDocument.components.schemas as Record<string, Record<string, unknown>>;
    expect(schemas.PalInfo).toMatchObject({
      type: 'object',
      xml: { name: 'palInfo', namespace: 'urn:pal-workflow:pal' },
    });
    expect(schemas.StringMap).toEqual(
      expect.objectContaining({ type: 'object', additionalProperties: { type: 'string' } }),
    );
    expect((schemas.Message!.properties as Record<string, unknown>).type).toEqual({
      type: 'string',
      nullable: true,
    });
    expect(schemas.ConsoleResult).toMatchObject({ 'x-extends': 'Result' });
  });
});
