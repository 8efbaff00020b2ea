/**
 * Bundles the OpenAPI document from the two models: the hand-written document as the
 * loader read it (operations, parameters, responses) plus component schemas derived
 * from the XSD model, so XML and JSON describe the same types. Object types are
 * flattened (base members first) with `x-extends` naming the base, because OpenAPI
 * client generators handle `allOf` inconsistently.
 */
import type { ApiModel } from '../model/operation-model.js';
import type { MemberModel, SchemaModel, TypeModel, TypeRef } from '../model/schema-model.js';

type Json = Record<string, unknown>;

export interface OpenApiBundle {
  document: Json;
}

function refSchema(ref: TypeRef): Json {
  if (ref.kind !== 'builtin') return { $ref: `#/components/schemas/${ref.name}` };
  switch (ref.name) {
    case 'string':
      return { type: 'string' };
    case 'boolean':
      return { type: 'boolean' };
    case 'int':
      return { type: 'integer', format: 'int32' };
    case 'unsignedShort':
      return { type: 'integer', format: 'int32', minimum: 0, maximum: 65535 };
    case 'base64Binary':
      return { type: 'string', format: 'byte' };
  }
}

export function memberSchema(m: MemberModel): Json {
  const item =
    m.maxLength === undefined
      ? refSchema(m.type)
      : { ...refSchema(m.type), maxLength: m.maxLength };
  const schema: Json = m.list ? { type: 'array', items: item } : item;
  if (m.nillable)
    return m.type.kind === 'builtin'
      ? { ...schema, nullable: true }
      : { allOf: [schema], nullable: true };
  return m.doc ? { ...schema, description: m.doc } : schema;
}

export function componentSchema(t: TypeModel, model: SchemaModel): Json {
  const doc = t.doc ? { description: t.doc } : {};
  switch (t.kind) {
    case 'enum':
      return { type: 'string', enum: t.values, ...doc };
    case 'map':
      return { type: 'object', additionalProperties: refSchema(t.value), ...doc };
    case 'array':
      return { type: 'array', items: { ...refSchema(t.item) }, ...doc };
    case 'object': {
      const root = model.roots.find((r) => r.type.kind === 'named' && r.type.name === t.name);
      const required = t.members.filter((m) => !m.optional).map((m) => m.name);
      return {
        type: 'object',
        ...doc,
        ...(t.base ? { 'x-extends': t.base } : {}),
        properties: Object.fromEntries(t.members.map((m) => [m.name, memberSchema(m)])),
        ...(required.length ? { required } : {}),
        additionalProperties: false,
        xml: { ...(root ? { name: root.name } : {}), namespace: t.namespace },
      };
    }
  }
}

export function emitOpenApiBundle(api: ApiModel, model: SchemaModel): OpenApiBundle {
  // A copy: the model is shared by every emitter and stays as loaded.
  const document = structuredClone(api.document) as Json;
  stateHeaderLimits(document, api);
  const components = (document.components ?? {}) as Json;
  document.components = {
    schemas: Object.fromEntries(model.types.map((t) => [t.name, componentSchema(t, model)])),
    ...components,
  };
  return { document };
}

/**
 * Search headers take their maxLength from their search type's member in the XSD (the loader
 * put it into the model): written into the header parameters, so the published document says it.
 */
function stateHeaderLimits(document: Json, api: ApiModel): void {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  const parameters = ((document.components as Json | undefined)?.parameters ?? {}) as Record<
    string,
    Json
  >;
  for (const op of api.operations) {
    const limits = new Map(
      (op.search?.headers ?? []).flatMap((h) =>
        h.maxLength === undefined ? [] : [[h.name, h.maxLength] as const],
      ),
    );
    if (!limits.size) continue;
    const listed = (paths[op.openapiPath]?.[op.method.toLowerCase()]?.parameters ?? []) as Json[];
    for (const entry of listed) {
      const ref = typeof entry.$ref === 'string' ? entry.$ref : undefined;
      const parameter = ref?.startsWith('#/components/parameters/')
        ? parameters[ref.slice('#/components/parameters/'.length)]
        : entry;
      const limit =
        parameter && parameter.in === 'header' ? limits.get(String(parameter.name)) : undefined;
      if (limit !== undefined)
        parameter!.schema = { ...(parameter!.schema as Json), maxLength: limit };
    }
  }
}
