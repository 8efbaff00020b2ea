/**
 * Loads the hand-written OpenAPI document (schemas/openapi/operations.yaml) into the
 * operation model, checking it against the XSD model: every referenced type exists and
 * has a root element, every search header is a member of its search type (whose
 * maxLength it takes), every path starts with one of the document's `x-roots`. Headers marked
 * `x-transport: true` are read by the server around the operation, not by its input.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import YAML from 'yaml';
import type { Diagnostics } from '../diagnostics.js';
import type {
  ApiModel,
  OperationModel,
  ParamModel,
  ResponseModel,
  RootsModel,
  ScalarType,
} from '../model/operation-model.js';
import type { SchemaModel } from '../model/schema-model.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// A path segment that needs no percent-encoding.
const SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** `x-roots`: the default first path segments, written once for the generator to emit. */
function readRoots(doc: Json, file: string, diagnostics: Diagnostics): RootsModel {
  const raw = (doc['x-roots'] ?? {}) as Json;
  const roots = { service: String(raw.service ?? ''), user: String(raw.user ?? '') };
  for (const [kind, value] of Object.entries(roots))
    if (!SEGMENT.test(value))
      diagnostics.error(
        'OAS031',
        `${file}#x-roots`,
        `x-roots.${kind} must be one path segment, got "${value}"`,
      );
  if (roots.service === roots.user)
    diagnostics.error('OAS031', `${file}#x-roots`, 'x-roots.service and x-roots.user must differ');
  return roots;
}

/** The YAML as a document, or an OAS000 at the line and column where it stops being YAML. */
function readYaml(path: string, file: string, diagnostics: Diagnostics): Json | undefined {
  const parsed = YAML.parseDocument(readFileSync(path, 'utf8'));
  const [error] = parsed.errors;
  if (error) {
    const at = error.linePos?.[0];
    // The library's message ends in " at line L, column C:" and a frame of the source.
    const message = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    diagnostics.error('OAS000', at ? `${file}:${at.line}:${at.col}` : file, `not YAML: ${message}`);
    return undefined;
  }
  const doc: unknown = parsed.toJS();
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    diagnostics.error('OAS000', file, 'the document is not a YAML mapping');
    return undefined;
  }
  return doc as Json;
}

/**
 * Every `$ref` in the document must lead somewhere before Java's generator sees it: a schema to a
 * type of the XSDs (the bundle's components.schemas are made from them), anything else to a
 * component the document has. Hand-written component schemas would replace the XSDs' own.
 */
function checkReferences(
  doc: Json,
  file: string,
  model: SchemaModel,
  diagnostics: Diagnostics,
): void {
  if (doc.components?.schemas !== undefined)
    diagnostics.error(
      'OAS003',
      `${file}#components.schemas`,
      'data types are written in the XSDs, and components.schemas is made from them: remove it',
    );
  const types = new Set(model.types.map((t) => t.name));
  const visit = (node: unknown, where: string): void => {
    if (Array.isArray(node)) for (const item of node) visit(item, where);
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const ref = (node as Json).$ref;
    if (typeof ref === 'string') {
      const [hash, components, section, name, ...rest] = ref.split('/');
      if (hash !== '#' || components !== 'components' || !section || !name || rest.length)
        diagnostics.error(
          'OAS001',
          where,
          `$ref ${ref}: only #/components/<section>/<name> is supported`,
        );
      else if (section === 'schemas') {
        if (!types.has(name))
          diagnostics.error('OAS002', where, `$ref ${ref}: the XSDs have no type ${name}`);
      } else if (doc.components?.[section]?.[name] === undefined)
        diagnostics.error('OAS001', where, `$ref ${ref}: components.${section} has no ${name}`);
    }
    for (const value of Object.values(node as Json)) visit(value, where);
  };
  for (const [openapiPath, item] of Object.entries((doc.paths ?? {}) as Json))
    for (const [method, op] of Object.entries((item ?? {}) as Json))
      visit(op, `${file}#${(op as Json | null)?.operationId ?? `${method} ${openapiPath}`}`);
  for (const [section, entries] of Object.entries((doc.components ?? {}) as Json))
    for (const [name, entry] of Object.entries((entries ?? {}) as Json))
      visit(entry, `${file}#components.${section}.${name}`);
}

export function loadApi(path: string, model: SchemaModel, diagnostics: Diagnostics): ApiModel {
  const file = basename(path);
  const doc = readYaml(path, file, diagnostics);
  if (!doc) return { file, document: {}, roots: { service: '', user: '' }, operations: [] };
  if (doc.paths === null || typeof doc.paths !== 'object')
    diagnostics.error('OAS004', file, 'the document has no paths');
  checkReferences(doc, file, model, diagnostics);
  const roots = readRoots(doc, file, diagnostics);
  // checkReferences said what a reference that leads nowhere is.
  const deref = (node: Json): Json => {
    if (node && typeof node.$ref === 'string' && node.$ref.startsWith('#/components/')) {
      const [, , section, name] = node.$ref.split('/');
      return (doc.components?.[section!]?.[name!] as Json | undefined) ?? {};
    }
    return node;
  };
  const schemaName = (schema: Json | undefined): string | undefined => {
    const ref = schema?.$ref ?? schema?.allOf?.[0]?.$ref;
    return typeof ref === 'string' ? ref.split('/').pop() : undefined;
  };
  // A type the XSDs do not have at all is checkReferences' OAS002: said once, there.
  const known = (type: string) => model.types.some((t) => t.name === type);
  const rootOfType = (type: string, where: string): string => {
    const root = model.roots.find((r) => r.type.kind !== 'builtin' && r.type.name === type);
    if (!root && known(type))
      diagnostics.error('OAS010', where, `type ${type} has no root element in the XSDs`);
    return root?.name ?? type;
  };
  const rootOfList = (itemType: string, where: string): string => {
    const listType = model.types.find(
      (t) => t.kind === 'array' && t.item.kind === 'named' && t.item.name === itemType,
    );
    if (listType) return rootOfType(listType.name, where);
    if (known(itemType)) diagnostics.error('OAS011', where, `no list wrapper type of ${itemType}`);
    return itemType;
  };
  const scalar = (schema: Json | undefined, where: string): ScalarType => {
    switch (schema?.type) {
      case 'string':
        return 'string';
      case 'boolean':
        return 'boolean';
      case 'integer':
        return 'int';
      default:
        diagnostics.error(
          'OAS020',
          where,
          `parameter type ${String(schema?.type)} is not supported`,
        );
        return 'string';
    }
  };
  const maxLength = (schema: Json | undefined, where: string): { maxLength?: number } => {
    const value: unknown = schema?.maxLength;
    if (value === undefined) return {};
    if (schema?.type !== 'string' || !Number.isSafeInteger(value) || (value as number) < 1) {
      diagnostics.error('OAS021', where, 'maxLength must be a positive integer on a string');
      return {};
    }
    return { maxLength: value as number };
  };
  const enumeration = (schema: Json | undefined, where: string): { enum?: string[] } => {
    const values: unknown = schema?.enum;
    if (values === undefined) return {};
    if (
      schema?.type !== 'string' ||
      !Array.isArray(values) ||
      values.length === 0 ||
      values.some((v) => typeof v !== 'string') ||
      new Set(values).size !== values.length
    ) {
      diagnostics.error('OAS022', where, 'enum must be a list of distinct strings on a string');
      return {};
    }
    return { enum: values as string[] };
  };
  const param = (p: Json, where: string): ParamModel => ({
    name: String(p.name),
    type: scalar(p.schema, `${where} ${p.name}`),
    required: p.required === true,
    ...(p.description ? { description: String(p.description).trim() } : {}),
    ...maxLength(p.schema, `${where} ${p.name}`),
    ...enumeration(p.schema, `${where} ${p.name}`),
  });

  const operations: OperationModel[] = [];
  for (const [openapiPath, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const method of ['get', 'post'] as const) {
      const op = (item as Json)[method] as Json | undefined;
      if (!op) continue;
      const where = `${file}#${op.operationId ?? `${method} ${openapiPath}`}`;
      const segments = openapiPath.split('/');
      const rootKind =
        segments[1] === roots.service ? 'service' : segments[1] === roots.user ? 'user' : undefined;
      if (!rootKind)
        diagnostics.error(
          'OAS030',
          where,
          `path must start with /${roots.service}/ or /${roots.user}/ (x-roots)`,
        );
      const params = ((op.parameters ?? []) as Json[]).map(deref);
      // `x-transport: true`: a header the server reads around the operation (Idempotency-Key),
      // not part of its input; every other header builds the operation's search.
      const transport = (p: Json) => p['x-transport'] === true;
      for (const p of params)
        if (transport(p) && p.in !== 'header')
          diagnostics.error('OAS044', `${where} ${p.name}`, 'x-transport is for header parameters');
      const transportHeaders = params
        .filter((p) => p.in === 'header' && transport(p))
        .map((p) => param(p, where));
      const headers = params
        .filter((p) => p.in === 'header' && !transport(p))
        .map((p) => param(p, where));
      const searchType = op['x-search'] as string | undefined;
      if (headers.length && !searchType)
        diagnostics.error('OAS040', where, 'header parameters need x-search');
      if (searchType) {
        const t = model.types.find((x) => x.name === searchType);
        if (t?.kind !== 'object')
          diagnostics.error('OAS041', where, `x-search ${searchType} is not an XSD type`);
        else
          for (const h of headers) {
            const member = t.members.find((m) => m.name === h.name);
            if (!member)
              diagnostics.error(
                'OAS042',
                where,
                `header ${h.name} is not a member of ${searchType}`,
              );
            // A search header is its search type's member: the XSD's maxLength holds for it too.
            else if (member.maxLength !== undefined && h.maxLength === undefined)
              h.maxLength = member.maxLength;
            else if (member.maxLength !== h.maxLength)
              diagnostics.error(
                'OAS043',
                where,
                `header ${h.name}: maxLength ${h.maxLength} differs from ${searchType}.${h.name} (${member.maxLength ?? 'none'}); state it once, in the XSD`,
              );
          }
      }
      const body = op.requestBody ? deref(op.requestBody) : undefined;
      const content = (body?.content ?? {}) as Json;
      let form: OperationModel['form'];
      let typedBody: OperationModel['body'];
      const formSchema = content['application/x-www-form-urlencoded']?.schema as Json | undefined;
      if (formSchema) {
        const required = new Set<string>(formSchema.required ?? []);
        form = {
          fields: Object.entries((formSchema.properties ?? {}) as Json).map(([name, s]) =>
            param(
              {
                name,
                schema: s,
                required: required.has(name),
                description: (s as Json).description,
              },
              where,
            ),
          ),
        };
      } else if (content['application/json'] || content['application/xml']) {
        const schema = (content['application/json'] ?? content['application/xml']).schema as Json;
        const type = schemaName(schema);
        typedBody = type
          ? {
              kind: 'typed',
              type,
              root: rootOfType(type, where),
              required: body?.required === true,
            }
          : { kind: 'any', required: body?.required === true };
      }
      const ok = deref(op.responses?.['200'] ?? {}) as Json;
      const okContent = (ok.content ?? {}) as Json;
      const okSchema = (
        okContent['application/json'] ??
        okContent['application/xml'] ??
        Object.values(okContent)[0]
      )?.schema as Json | undefined;
      let response: ResponseModel;
      if (okSchema?.type === 'array') {
        const itemType = schemaName(okSchema.items);
        if (itemType === undefined)
          diagnostics.error('OAS011', where, 'the items of a list must be a $ref to an XSD type');
        response = {
          kind: 'list',
          itemType: itemType ?? 'unknown',
          root: itemType === undefined ? 'unknown' : rootOfList(itemType, where),
        };
      } else if (schemaName(okSchema)) {
        const type = schemaName(okSchema)!;
        response = { kind: 'object', type, root: rootOfType(type, where) };
      } else {
        const type = scalar(okSchema, `${where} response`);
        response = { kind: 'simple', type, root: type };
      }
      const pathAfterRoot = `/${segments.slice(2).join('/')}`;
      operations.push({
        id: String(op.operationId),
        specId: String(op['x-spec-id'] ?? ''),
        tag: String(op.tags?.[0] ?? ''),
        summary: String(op.summary ?? '').trim(),
        method: method.toUpperCase() as 'GET' | 'POST',
        root: rootKind ?? 'service',
        path: pathAfterRoot,
        openapiPath,
        pathParams: params.filter((p) => p.in === 'path').map((p) => param(p, where)),
        queryParams: params.filter((p) => p.in === 'query').map((p) => param(p, where)),
        ...(searchType ? { search: { type: searchType, headers } } : {}),
        ...(transportHeaders.length ? { transportHeaders } : {}),
        ...(form ? { form } : {}),
        ...(typedBody ? { body: typedBody } : {}),
        response,
        totalCountHeader: Boolean(ok.headers?.['X-Total-Count']),
      });
      if (!op.operationId || !op['x-spec-id'])
        diagnostics.error('OAS050', where, 'operationId and x-spec-id are required');
    }
  }
  // An operationId is a client method, a Handlers key and a route: two of one id would be one of
  // each (and stop Java's client generator with a stack trace). An x-spec-id names one operation.
  for (const key of ['operationId', 'x-spec-id'] as const) {
    const first = new Map<string, OperationModel>();
    for (const op of operations) {
      const value = key === 'operationId' ? op.id : op.specId;
      if (!value || value === 'undefined') continue; // OAS050 said it is missing
      const earlier = first.get(value);
      if (earlier)
        diagnostics.error(
          'OAS051',
          `${file}#${op.id}`,
          `${op.method} ${op.openapiPath} has the ${key} of ${earlier.method} ${earlier.openapiPath}: each operation needs its own`,
        );
      else first.set(value, op);
    }
  }
  return { file, document: doc, roots, operations };
}
