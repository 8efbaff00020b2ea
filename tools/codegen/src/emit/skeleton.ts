/**
 * Emits packages/server-skeleton from the operation model: the route table and the
 * default roots (operations.gen.ts), the typed inputs and the Handlers interface
 * (handlers.gen.ts), and the bundled OpenAPI document (openapi.gen.ts). All logic
 * (parsing, negotiation, errors) lives in the package's hand-written runtime, which
 * the route table drives.
 */
import {
  Project,
  StructureKind,
  VariableDeclarationKind,
  type StatementStructures,
} from 'ts-morph';
import type { GenerateContext } from '../context.js';
import type { ApiModel, OperationModel, ParamModel, ScalarType } from '../model/operation-model.js';
import type { EmittedFile } from '../write.js';
import type { OpenApiBundle } from './openapi-bundle.js';
import { tsPropertyName } from './ts-names.js';

const TS_SCALAR: Record<ScalarType, string> = {
  string: 'string',
  boolean: 'boolean',
  int: 'number',
};

export function pascal(id: string): string {
  return id.charAt(0).toUpperCase() + id.slice(1);
}

function paramsType(params: ParamModel[]): string {
  const type = (p: ParamModel) =>
    p.enum ? p.enum.map((v) => JSON.stringify(v)).join(' | ') : TS_SCALAR[p.type];
  return `{ ${params.map((p) => `${tsPropertyName(p.name)}${p.required ? '' : '?'}: ${type(p)}`).join('; ')} }`;
}

function fastifyPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

function outputType(op: OperationModel): string {
  const r = op.response;
  if (r.kind === 'simple') return TS_SCALAR[r.type];
  if (r.kind === 'object') return r.type;
  return op.totalCountHeader ? `Page<${r.itemType}>` : `${r.itemType}[]`;
}

function inputMembers(op: OperationModel): string[] {
  const members: string[] = [];
  if (op.pathParams.length) members.push(`params: ${paramsType(op.pathParams)}`);
  if (op.queryParams.length) members.push(`query: ${paramsType(op.queryParams)}`);
  if (op.search)
    members.push(
      `\n/** Built from the search headers; absent booleans are false, startRecord 0. */\nsearch: ${op.search.type}`,
    );
  if (op.form) members.push(`form: ${paramsType(op.form.fields)}`);
  if (op.body) {
    const type = op.body.kind === 'typed' ? op.body.type : 'AnyDocument';
    members.push(op.body.required ? `body: ${type}` : `body?: ${type}`);
  }
  return members;
}

/** The route table's view of parameters: what the runtime reads and checks. */
export function paramSpecs(params: ParamModel[]): string {
  return JSON.stringify(
    params.map(({ name, type, required, maxLength, enum: values }) => ({
      name,
      type,
      required,
      ...(maxLength === undefined ? {} : { maxLength }),
      ...(values === undefined ? {} : { enum: values }),
    })),
  );
}

export function specLiteral(op: OperationModel): string {
  const params = paramSpecs;
  const parts = [
    `id: ${JSON.stringify(op.id)}`,
    `specId: ${JSON.stringify(op.specId)}`,
    `method: ${JSON.stringify(op.method)}`,
    `root: ${JSON.stringify(op.root)}`,
    `path: ${JSON.stringify(fastifyPath(op.path))}`,
    `pathParams: ${params(op.pathParams)}`,
    `queryParams: ${params(op.queryParams)}`,
  ];
  if (op.search)
    parts.push(
      `search: { type: ${JSON.stringify(op.search.type)}, headers: ${params(op.search.headers)} }`,
    );
  if (op.transportHeaders) parts.push(`transportHeaders: ${params(op.transportHeaders)}`);
  if (op.form) parts.push(`form: { fields: ${params(op.form.fields)} }`);
  if (op.body)
    parts.push(
      `body: ${
        op.body.kind === 'typed'
          ? `{ kind: 'typed', root: ${JSON.stringify(op.body.root)}, required: ${op.body.required} }`
          : `{ kind: 'any', required: ${op.body.required} }`
      }`,
    );
  const r = op.response;
  parts.push(
    `response: ${
      r.kind === 'list'
        ? `{ kind: 'list', root: ${JSON.stringify(r.root)}, totalCount: ${op.totalCountHeader} }`
        : `{ kind: ${JSON.stringify(r.kind)}, root: ${JSON.stringify(r.root)} }`
    }`,
  );
  return `{ ${parts.join(', ')} }`;
}

export function emitSkeleton(
  ctx: GenerateContext,
  api: ApiModel,
  bundle: OpenApiBundle,
): EmittedFile[] {
  const { operations } = api;
  const project = new Project({ useInMemoryFileSystem: true });
  const sources = [ctx.openapiFile, ...ctx.xsdFiles];
  const generator = 'emit/skeleton.ts';

  const operationsFile = project.createSourceFile('operations.gen.ts', {
    statements: [
      {
        kind: StructureKind.ImportDeclaration,
        isTypeOnly: true,
        moduleSpecifier: '../runtime/operation-spec.js',
        namedImports: ['OperationSpec'],
      },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: [
          'The first path segments a server uses unless configured otherwise: `{service_root}` and `{user_root}` (x-roots of the OpenAPI document).',
        ],
        declarations: [
          { name: 'defaultRoots', initializer: `${JSON.stringify(api.roots)} as const` },
        ],
      },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: [
          'Every operation of the interface: how its request is read and its response written.',
        ],
        declarations: [
          {
            name: 'operations',
            initializer: `{ ${operations.map((op) => `${op.id}: ${specLiteral(op)}`).join(',\n')} } as const satisfies Record<string, OperationSpec>`,
          },
        ],
      },
      {
        kind: StructureKind.TypeAlias,
        isExported: true,
        name: 'OperationId',
        type: 'keyof typeof operations',
      },
    ],
  });

  const typeImports = new Set<string>();
  for (const op of operations) {
    if (op.search) typeImports.add(op.search.type);
    if (op.body?.kind === 'typed') typeImports.add(op.body.type);
    if (op.response.kind === 'object') typeImports.add(op.response.type);
    if (op.response.kind === 'list') typeImports.add(op.response.itemType);
  }
  const handlerStatements: StatementStructures[] = [
    {
      kind: StructureKind.ImportDeclaration,
      isTypeOnly: true,
      moduleSpecifier: '@pal-workflow/types',
      namedImports: [...typeImports].sort(),
    },
    {
      kind: StructureKind.ImportDeclaration,
      isTypeOnly: true,
      moduleSpecifier: '../runtime/operation-spec.js',
      namedImports: ['AnyDocument', 'Page'],
    },
    ...operations.map((op): StatementStructures => ({
      kind: StructureKind.TypeAlias,
      isExported: true,
      name: `${pascal(op.id)}Input`,
      docs: [`Input of ${op.specId} ${op.id}.`],
      type: `{ ${inputMembers(op).join('; ')} }`,
    })),
    {
      kind: StructureKind.Interface,
      isExported: true,
      name: 'Handlers',
      typeParameters: ['Ctx'],
      docs: [
        'One method per operation. An app implements it with `satisfies Handlers<AppContext>`, so a schema change becomes a compile error at each handler that must change. Handlers return values; the runtime writes them in the negotiated format.',
      ],
      methods: operations.map((op) => ({
        name: op.id,
        docs: [`${op.specId} \`${op.method} /{${op.root}_root}${op.path}\`: ${op.summary}`],
        parameters: [
          { name: 'input', type: `${pascal(op.id)}Input` },
          { name: 'ctx', type: 'Ctx' },
        ],
        returnType: `Promise<${outputType(op)}>`,
      })),
    },
    {
      kind: StructureKind.TypeAlias,
      isExported: true,
      name: 'OperationInputs',
      type: `{ ${operations.map((op) => `${op.id}: ${pascal(op.id)}Input`).join('; ')} }`,
    },
    {
      kind: StructureKind.TypeAlias,
      isExported: true,
      name: 'OperationOutputs',
      type: `{ ${operations.map((op) => `${op.id}: ${outputType(op)}`).join('; ')} }`,
    },
  ];
  const handlersFile = project.createSourceFile('handlers.gen.ts', {
    statements: handlerStatements,
  });

  const openapiFile = project.createSourceFile('openapi.gen.ts', {
    statements: [
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: [
          'The bundled OpenAPI document: the hand-written operations with component schemas from the XSDs.',
        ],
        declarations: [
          { name: 'openApiDocument', initializer: `${JSON.stringify(bundle.document)} as const` },
        ],
      },
    ],
  });
  return [
    {
      path: `${ctx.out.skeleton}/operations.gen.ts`,
      content: operationsFile.getFullText(),
      generator,
      sources,
    },
    {
      path: `${ctx.out.skeleton}/handlers.gen.ts`,
      content: handlersFile.getFullText(),
      generator,
      sources,
    },
    {
      path: `${ctx.out.skeleton}/openapi.gen.ts`,
      content: openapiFile.getFullText(),
      generator,
      sources,
    },
  ];
}
