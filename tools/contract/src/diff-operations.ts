/**
 * Changes of the operations. api-smart-diff compares the bundled OpenAPI documents and classifies
 * what it sees well: operations, parameters and headers, request bodies, media types, response
 * statuses and headers, security. The generator's operation model adds what the generated
 * packages depend on and a JSON-schema diff cannot see: operation ids (client methods, Handlers
 * keys), form fields, the XML root of a body or response, and list wrappers. Schemas inside
 * bodies and responses are the XSD types, classified once by diff-schema.ts.
 */
import { apiCompare, type Diff } from 'api-smart-diff';
import type { OperationModel, ParamModel } from '@pal-workflow/codegen';
import type { Change, ChangeBump } from './change.js';

type Json = Record<string, unknown>;
type Add = (bump: ChangeBump, kind: string, path: string, reason: string) => void;

const opKey = (op: OperationModel) => `${op.method} ${op.openapiPath}`;

/**
 * Operations whose method or path changed and whose operationId stayed: the old place is gone
 * and the new one was not there before, so it is the same operation (the same client method and
 * Handlers key), moved. By operationId, old place and new place as `METHOD /path`.
 */
function moved(
  before: { id: string; key: string }[],
  after: { id: string; key: string }[],
): Map<string, { from: string; to: string }> {
  const beforeKeys = new Set(before.map((o) => o.key));
  const afterKeys = new Set(after.map((o) => o.key));
  const gone = new Map(before.filter((o) => !afterKeys.has(o.key)).map((o) => [o.id, o.key]));
  const out = new Map<string, { from: string; to: string }>();
  for (const a of after) {
    const from = gone.get(a.id);
    if (from !== undefined && !beforeKeys.has(a.key)) out.set(a.id, { from, to: a.key });
  }
  return out;
}

export function diffOperationModels(before: OperationModel[], after: OperationModel[]): Change[] {
  const changes: Change[] = [];
  const add: Add = (bump, kind, path, reason) => changes.push({ bump, kind, path, reason });
  const afterByKey = new Map(after.map((op) => [opKey(op), op]));
  const beforeKeys = new Set(before.map(opKey));
  const ids = (ops: OperationModel[]) => ops.map((op) => ({ id: op.id, key: opKey(op) }));
  const moves = moved(ids(before), ids(after));
  const afterById = new Map(after.map((op) => [op.id, op]));
  // To the wire a new operation is an addition (api-smart-diff's minor); to a server built on
  // the skeleton it is a handler it must now have: `Handlers<Ctx>` gains a required member, so
  // the release is major (the four packages share one version).
  for (const a of after)
    if (!beforeKeys.has(opKey(a)) && !moves.has(a.id))
      add(
        'major',
        'operation-added',
        opKey(a),
        `new operation ${a.id}: Handlers of @pal-workflow/server-skeleton gains a required ${a.id}, which every server built on it must implement`,
      );
  for (const b of before) {
    // Operations removed are api-smart-diff's; a moved one is compared at its new place.
    const move = moves.get(b.id);
    const a = move ? afterById.get(b.id) : afterByKey.get(opKey(b));
    if (!a) continue;
    const path = opKey(a);
    if (move)
      add(
        'major',
        'operation-moved',
        path,
        `operation ${a.id} moved from ${move.from} to ${move.to}: clients built for the old ${
          b.method === a.method ? 'path' : 'method and path'
        } call a route the server no longer has`,
      );
    if (a.id !== b.id)
      add(
        'major',
        'operation-id-changed',
        path,
        `operationId changed from ${b.id} to ${a.id}: the client method and the Handlers key are renamed`,
      );
    if (a.specId !== b.specId)
      add('patch', 'spec-id-changed', path, `x-spec-id changed from ${b.specId} to ${a.specId}`);
    if (a.search?.type !== b.search?.type && a.search && b.search)
      add(
        'major',
        'search-type-changed',
        path,
        `search headers build ${a.search.type} instead of ${b.search.type}`,
      );
    diffForm(b, a, add);
    diffBody(b, a, add);
    diffResponse(b, a, add);
  }
  return changes;
}

function diffForm(b: OperationModel, a: OperationModel, add: Add): void {
  const path = `${opKey(a)} form`;
  if (!b.form || !a.form) {
    if (b.form && !a.form)
      add('major', 'form-removed', path, 'the operation no longer takes a form');
    if (!b.form && a.form)
      add(
        a.form.fields.some((f) => f.required) ? 'major' : 'minor',
        'form-added',
        path,
        'the operation now takes a form',
      );
    return;
  }
  const fieldsAfter = new Map(a.form.fields.map((f) => [f.name, f]));
  const fieldsBefore = new Map(b.form.fields.map((f) => [f.name, f]));
  const describe = (f: ParamModel) => `${f.type}, ${f.required ? 'required' : 'optional'}`;
  for (const [name, fb] of fieldsBefore) {
    const fa = fieldsAfter.get(name);
    const fpath = `${path} field ${name}`;
    if (!fa) {
      add('major', 'form-field-removed', fpath, `form field ${name} (${describe(fb)}) removed`);
      continue;
    }
    if (fa.type !== fb.type)
      add('major', 'form-field-type-changed', fpath, `type changed from ${fb.type} to ${fa.type}`);
    if (!fb.required && fa.required)
      add('major', 'form-field-now-required', fpath, 'optional form field became required');
    if (fb.required && !fa.required)
      add(
        'minor',
        'form-field-now-optional',
        fpath,
        'required form field became optional: old requests stay valid',
      );
  }
  for (const [name, fa] of fieldsAfter)
    if (!fieldsBefore.has(name))
      add(
        fa.required ? 'major' : 'minor',
        fa.required ? 'form-field-added-required' : 'form-field-added-optional',
        `${path} field ${name}`,
        `new ${fa.required ? 'required' : 'optional'} form field ${name} (${fa.type})`,
      );
}

function bodyText(body: OperationModel['body']): string {
  if (!body) return 'no body';
  return body.kind === 'any' ? 'any document' : `${body.type} as <${body.root}>`;
}

function diffBody(b: OperationModel, a: OperationModel, add: Add): void {
  const path = `${opKey(a)} requestBody`;
  if (bodyText(b.body) === bodyText(a.body)) return;
  if (!b.body && a.body && !a.body.required)
    add('minor', 'body-added-optional', path, `the operation now takes ${bodyText(a.body)}`);
  else
    add(
      'major',
      'body-changed',
      path,
      `the body changed from ${bodyText(b.body)} to ${bodyText(a.body)}`,
    );
}

function responseText(r: OperationModel['response']): string {
  switch (r.kind) {
    case 'simple':
      return `${r.type} as <${r.root}>`;
    case 'object':
      return `${r.type} as <${r.root}>`;
    case 'list':
      return `a list of ${r.itemType} in <${r.root}>`;
  }
}

function diffResponse(b: OperationModel, a: OperationModel, add: Add): void {
  if (responseText(b.response) !== responseText(a.response))
    add(
      'major',
      'response-changed',
      `${opKey(a)} responses.200`,
      `the response changed from ${responseText(b.response)} to ${responseText(a.response)}`,
    );
}

/** Where a diff is, readably: `GET /services/rest/pals parameters[header name] required`. */
function formatPath(path: readonly (string | number)[], before: Json, after: Json): string {
  const deref = (node: unknown, doc: Json): unknown => {
    const ref = (node as Json | undefined)?.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return node;
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>((n, k) => (n as Json | undefined)?.[k], doc);
  };
  if (path[0] !== 'paths') return path.join('.');
  if (path.length === 2) return String(path[1]);
  const parts = [`${String(path[2]).toUpperCase()} ${String(path[1])}`];
  let nodeB = deref((before.paths as Json | undefined)?.[path[1]!], before);
  let nodeA = deref((after.paths as Json | undefined)?.[path[1]!], after);
  for (const key of path.slice(2)) {
    nodeB = deref((nodeB as Json | undefined)?.[key], before);
    nodeA = deref((nodeA as Json | undefined)?.[key], after);
    if (key === path[2]) continue;
    if (typeof key === 'number') {
      const item = (nodeA ?? nodeB) as Json | undefined;
      parts[parts.length - 1] += item?.name
        ? `[${item.in ? `${String(item.in)} ` : ''}${String(item.name)}]`
        : `[${key}]`;
    } else parts.push(key);
  }
  return parts.join(' ');
}

function bumpOf(diff: Diff): ChangeBump {
  switch (diff.type) {
    case 'breaking':
      return 'major';
    case 'non-breaking':
    case 'deprecated':
      return 'minor';
    default:
      return 'patch';
  }
}

/** What the operation model or the XSD diff already classifies, or what is not contract. */
function ownedElsewhere(path: readonly (string | number)[]): boolean {
  // Component parameters, bodies and headers are reported where operations use them.
  if (path[0] === 'components' && path[1] !== 'securitySchemes') return true;
  if (path[0] === 'info' && path[1] === 'version') return true;
  const content = path.indexOf('content');
  if (content >= 0 && path[content + 2] === 'schema') return true;
  const last = path[path.length - 1];
  return last === 'operationId' || last === 'x-spec-id' || last === 'x-search';
}

/** What was removed: an operation by its id, not by the first characters of its JSON. */
function removedText(before: unknown): string {
  if (before === undefined) return '';
  const id = (before as Json | null)?.operationId;
  return typeof id === 'string' ? ` (operation ${id})` : ` (was ${value(before)})`;
}

function value(v: unknown): string {
  if (v === undefined) return '';
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/**
 * The schema each operation names per body or response media type, as written ($ref kept):
 * the model reads one media type per body and response, api-smart-diff's findings inside them
 * are left to the XSD diff, so a change of the type one media type carries is caught here.
 */
// Form fields are the operation model's (diffForm).
const FORM_MEDIA_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

function mediaSchemas(doc: Json): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json))
    for (const [method, op] of Object.entries(item as Json)) {
      const o = op as Json;
      const sections: [string, Json | undefined][] = [
        ['requestBody', o.requestBody as Json | undefined],
        ...Object.entries((o.responses ?? {}) as Json).map(
          ([status, r]) => [`responses ${status}`, r as Json] as [string, Json],
        ),
      ];
      for (const [section, node] of sections)
        for (const [media, content] of Object.entries((node?.content ?? {}) as Json))
          if (!FORM_MEDIA_TYPES.includes(media))
            out.set(
              `${method.toUpperCase()} ${path} ${section} ${media}`,
              JSON.stringify((content as Json).schema ?? null),
            );
    }
  return out;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operationsOf(doc: Json): { id: string; key: string; path: string; method: string }[] {
  return Object.entries((doc.paths ?? {}) as Json).flatMap(([path, item]) =>
    Object.entries((item ?? {}) as Json)
      .filter(
        ([method, op]) => METHODS.includes(method) && typeof (op as Json)?.operationId === 'string',
      )
      .map(([method, op]) => ({
        id: (op as Json).operationId as string,
        key: `${method.toUpperCase()} ${path}`,
        path,
        method,
      })),
  );
}

/**
 * `before` with each moved operation (diffOperationModels reports the move) put at its new place,
 * so api-smart-diff compares its parameters, media types and responses as those of an operation
 * that stayed, instead of reporting one operation removed and another added.
 */
function withMovesApplied(before: Json, after: Json): Json {
  const ops = operationsOf(before);
  const moves = moved(ops, operationsOf(after));
  if (!moves.size) return before;
  const paths = structuredClone((before.paths ?? {}) as Record<string, Json>);
  for (const [id, { to }] of moves) {
    const from = ops.find((o) => o.id === id)!;
    const operation = paths[from.path]![from.method];
    delete paths[from.path]![from.method];
    if (!Object.keys(paths[from.path]!).some((k) => METHODS.includes(k))) delete paths[from.path];
    const [method, path] = [
      to.slice(0, to.indexOf(' ')).toLowerCase(),
      to.slice(to.indexOf(' ') + 1),
    ];
    paths[path] = { ...(paths[path] ?? {}), [method]: operation };
  }
  return { ...before, paths };
}

export function diffOpenApi(original: Json, after: Json): Change[] {
  const before = withMovesApplied(original, after);
  const schemasAfter = mediaSchemas(after);
  const mediaChanges: Change[] = [...mediaSchemas(before)]
    .filter(([key, schema]) => schemasAfter.has(key) && schemasAfter.get(key) !== schema)
    .map(([key, schema]) => ({
      bump: 'major',
      kind: 'media-schema-changed',
      path: key,
      reason: `schema changed from ${value(JSON.parse(schema))} to ${value(JSON.parse(schemasAfter.get(key)!))}`,
    }));
  const { diffs } = apiCompare(before, after);
  return [
    ...mediaChanges,
    ...diffs
      .filter((d) => !ownedElsewhere(d.path))
      .map((d) => {
        const change =
          d.action === 'replace'
            ? `changed from ${value(d.before)} to ${value(d.after)}`
            : d.action === 'add'
              ? `added${typeof d.after === 'object' ? '' : ` (${value(d.after)})`}`
              : d.action === 'remove'
                ? `removed${removedText(d.before)}`
                : `renamed`;
        return {
          bump: bumpOf(d) as ChangeBump,
          kind: `openapi-${d.action}`,
          path: formatPath(d.path, before, after),
          reason: `${change}; api-smart-diff: ${d.type}`,
        };
      }),
  ];
}
