/**
 * Emits packages/validators: a zod schema for every XSD type (schemas.gen.ts) and
 * the codec descriptors (descriptors.gen.ts) that the hand-written XML/JSON codecs
 * in packages/validators/src/runtime interpret: member order, list-ness, maps,
 * arrays, nillable members and the root elements with their namespaces.
 */
import {
  Project,
  StructureKind,
  VariableDeclarationKind,
  type StatementStructures,
} from 'ts-morph';
import type { GenerateContext } from '../context.js';
import {
  dependencyOrder,
  type MemberModel,
  type SchemaModel,
  type TypeModel,
  type TypeRef,
} from '../model/schema-model.js';
import type { EmittedFile } from '../write.js';
import { tsPropertyName, tsTypeOf } from './ts-names.js';

// The runtime defines the built-ins once (runtime/xsd-builtins.ts); generated schemas refer to them.
const ZOD_BUILTIN = {
  string: 'xsString',
  boolean: 'xsBoolean',
  int: 'xsInt',
  unsignedShort: 'xsUnsignedShort',
  base64Binary: 'xsBase64Binary',
} as const;

export function zodName(typeName: string): string {
  return `z${typeName}`;
}

function zodOf(ref: TypeRef): string {
  return ref.kind === 'builtin' ? ZOD_BUILTIN[ref.name] : zodName(ref.name);
}

export function zodMember(m: MemberModel): string {
  let s = zodOf(m.type);
  if (m.maxLength !== undefined) s = `${s}.max(${m.maxLength})`;
  if (m.list) s = `z.array(${s})`;
  if (m.nillable) s = `${s}.nullable()`;
  if (m.optional) s = `${s}.optional()`;
  return s;
}

function zodInitializer(t: TypeModel): string {
  switch (t.kind) {
    case 'enum':
      return `z.enum(${t.name})`;
    case 'map':
      return `xsMap(${zodOf(t.value)})`;
    case 'array':
      return `z.array(${zodOf(t.item)})`;
    case 'object': {
      const own = t.ownMembers.map((m) => `${tsPropertyName(m.name)}: ${zodMember(m)}`);
      const base = t.base ? [`...${zodName(t.base)}.shape`] : [];
      return `z.strictObject({ ${[...base, ...own].join(', ')} })`;
    }
  }
}

/** The built-in schemas the object types' members use. */
function usedBuiltins(model: SchemaModel): Set<string> {
  const used = new Set<string>();
  for (const t of model.types) {
    const refs =
      t.kind === 'object'
        ? t.ownMembers.map((m) => m.type)
        : t.kind === 'map'
          ? [t.value]
          : t.kind === 'array'
            ? [t.item]
            : [];
    for (const r of refs) if (r.kind === 'builtin') used.add(ZOD_BUILTIN[r.name]);
    if (t.kind === 'map') used.add('xsMap');
  }
  return used;
}

export function emitValidators(ctx: GenerateContext, model: SchemaModel): EmittedFile[] {
  const project = new Project({ useInMemoryFileSystem: true });
  const enums = model.types.filter((t) => t.kind === 'enum').map((t) => t.name);
  const schemaStatements: StatementStructures[] = [
    { kind: StructureKind.ImportDeclaration, moduleSpecifier: 'zod', namedImports: ['z'] },
    ...(enums.length
      ? [
          {
            kind: StructureKind.ImportDeclaration,
            moduleSpecifier: '@pal-workflow/types',
            namedImports: enums,
          } as const,
        ]
      : []),
    {
      kind: StructureKind.ImportDeclaration,
      moduleSpecifier: '../runtime/xsd-builtins.js',
      namedImports: [...usedBuiltins(model)].sort(),
    },
    ...dependencyOrder(model).map((t): StatementStructures => ({
      kind: StructureKind.VariableStatement,
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: [`zod schema of {@link @pal-workflow/types#${t.name}} (${t.source}).`],
      declarations: [{ name: zodName(t.name), initializer: zodInitializer(t) }],
    })),
    {
      kind: StructureKind.VariableStatement,
      isExported: true,
      declarationKind: VariableDeclarationKind.Const,
      docs: ['Every schema by its type name.'],
      declarations: [
        {
          name: 'schemas',
          initializer: `{ ${model.types.map((t) => `${t.name}: ${zodName(t.name)}`).join(', ')} } as const`,
        },
      ],
    },
  ];
  const schemasFile = project.createSourceFile('schemas.gen.ts', { statements: schemaStatements });

  const descriptor = (t: TypeModel): string => {
    const ref = (r: TypeRef) => JSON.stringify(r.kind === 'builtin' ? `xs:${r.name}` : r.name);
    switch (t.kind) {
      case 'enum':
        return `{ kind: 'enum', values: ${JSON.stringify(t.values)} }`;
      case 'map':
        return `{ kind: 'map', value: ${ref(t.value)} }`;
      case 'array':
        return `{ kind: 'array', itemElement: ${JSON.stringify(t.itemElement)}, item: ${ref(t.item)} }`;
      case 'object':
        return `{ kind: 'object', namespace: ${JSON.stringify(t.namespace)}, ${t.base ? `base: ${JSON.stringify(t.base)}, ` : ''}members: [${t.members
          .map(
            (m) =>
              `{ name: ${JSON.stringify(m.name)}, type: ${ref(m.type)}, optional: ${m.optional}, list: ${m.list}, nillable: ${m.nillable} }`,
          )
          .join(', ')}] }`;
    }
  };
  // The prefix the schema itself binds to its target namespace (xmlns:pal, xmlns:svc).
  const prefixOf = (namespace: string) =>
    model.files.find((f) => f.namespace === namespace)?.prefix ?? 'ns';
  const rootType = (r: TypeRef) => (r.kind === 'builtin' ? `xs:${r.name}` : r.name);
  const descriptorFile = project.createSourceFile('descriptors.gen.ts', {
    statements: [
      {
        kind: StructureKind.ImportDeclaration,
        isTypeOnly: true,
        moduleSpecifier: '../runtime/descriptor.js',
        namedImports: ['RootDescriptor', 'TypeDescriptor'],
      },
      {
        kind: StructureKind.ImportDeclaration,
        isTypeOnly: true,
        moduleSpecifier: '@pal-workflow/types',
        namedImports: [
          ...new Set(model.roots.flatMap((r) => (r.type.kind === 'builtin' ? [] : [r.type.name]))),
        ].sort(),
      },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: ['The namespace of every schema file, by file.'],
        declarations: [
          {
            name: 'namespaces',
            initializer: `{ ${model.files.map((f) => `${JSON.stringify(f.file)}: ${JSON.stringify(f.namespace)}`).join(', ')} } as const`,
          },
        ],
      },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: ['How each type is written in XML and JSON, in wire order.'],
        declarations: [
          {
            name: 'typeDescriptors',
            type: 'Readonly<Record<TypeName, TypeDescriptor>>',
            initializer: `{ ${model.types.map((t) => `${t.name}: ${descriptor(t)}`).join(', ')} }`,
          },
        ],
      },
      {
        kind: StructureKind.TypeAlias,
        isExported: true,
        name: 'TypeName',
        type: model.types.map((t) => JSON.stringify(t.name)).join(' | '),
      },
      {
        kind: StructureKind.VariableStatement,
        isExported: true,
        declarationKind: VariableDeclarationKind.Const,
        docs: ['The global elements of the XSDs: the roots of XML documents.'],
        declarations: [
          {
            name: 'rootElements',
            type: 'Readonly<Record<RootName, RootDescriptor>>',
            initializer: `{ ${model.roots
              .map(
                (r) =>
                  `${tsPropertyName(r.name)}: { namespace: ${JSON.stringify(r.namespace)}, prefix: ${JSON.stringify(prefixOf(r.namespace))}, type: ${JSON.stringify(rootType(r.type))} }`,
              )
              .join(', ')} }`,
          },
        ],
      },
      {
        kind: StructureKind.TypeAlias,
        isExported: true,
        name: 'RootName',
        type: model.roots.map((r) => JSON.stringify(r.name)).join(' | '),
      },
      {
        kind: StructureKind.Interface,
        isExported: true,
        name: 'RootValues',
        docs: ['The TypeScript value of each root element.'],
        properties: model.roots.map((r) => ({
          name: tsPropertyName(r.name),
          type: tsTypeOf(r.type),
        })),
      },
    ],
  });
  const sources = ctx.xsdFiles;
  const generator = 'emit/validators.ts';
  return [
    {
      path: `${ctx.out.validators}/schemas.gen.ts`,
      content: schemasFile.getFullText(),
      generator,
      sources,
    },
    {
      path: `${ctx.out.validators}/descriptors.gen.ts`,
      content: descriptorFile.getFullText(),
      generator,
      sources,
    },
  ];
}
