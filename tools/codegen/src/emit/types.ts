/**
 * Emits packages/types: TypeScript interfaces, enums and aliases for every XSD type, built from
 * the schema model with ts-morph.
 *
 * xsd2ts (the design card's tool) is a cross-check, not the source: it translates the XSDs in a
 * scratch folder, and every type and property it wrote is compared with the model's. Where it
 * differs or has nothing (maps, arrays of arrays, list wrappers, nillable members,
 * xs:unsignedShort, enums it did not export), an info diagnostic TYPES1xx says so; what is
 * emitted is always the model's type.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import {
  Project,
  StructureKind,
  type EnumDeclarationStructure,
  type InterfaceDeclarationStructure,
  type OptionalKind,
  type PropertySignatureStructure,
  type SourceFile,
  type TypeAliasDeclarationStructure,
} from 'ts-morph';
import { abs, type GenerateContext } from '../context.js';
import type { Diagnostics } from '../diagnostics.js';
import type { ObjectTypeModel, SchemaModel, TypeModel } from '../model/schema-model.js';
import type { EmittedFile } from '../write.js';
import { tsMemberType, tsPropertyName, tsTypeOf } from './ts-names.js';

type Statement =
  InterfaceDeclarationStructure | EnumDeclarationStructure | TypeAliasDeclarationStructure;

export function emitTypes(
  ctx: GenerateContext,
  model: SchemaModel,
  diagnostics: Diagnostics,
): EmittedFile[] {
  const translated = runXsd2ts(ctx);
  const statements = model.types.map((t) => statementFor(t, translated, diagnostics));
  const project = new Project({ useInMemoryFileSystem: true });
  const file = project.createSourceFile('types.gen.ts', { statements });
  return [
    {
      path: `${ctx.out.types}/types.gen.ts`,
      content: file.getFullText(),
      generator: 'emit/types.ts (xsd2ts + ts-morph)',
      sources: ctx.xsdFiles,
    },
  ];
}

/** Runs xsd2ts on a copy of each XSD and parses what it wrote, for the cross-check. */
function runXsd2ts(ctx: GenerateContext): SourceFile[] {
  const scratch = mkdtempSync(join(tmpdir(), 'xsd2ts-'));
  try {
    // xsd2ts writes into ./src/generated relative to the working directory.
    mkdirSync(join(scratch, 'src/generated'), { recursive: true });
    const names = ctx.xsdFiles.map((f) => {
      copyFileSync(abs(ctx, f), join(scratch, basename(f)));
      return basename(f);
    });
    const entry = createRequire(import.meta.url).resolve('xsd2ts');
    const script = `const { generateTemplateClassesFromXSD } = require(${JSON.stringify(entry)});\n${names
      .map((n) => `generateTemplateClassesFromXSD(${JSON.stringify(`./${n}`)});`)
      .join('\n')}`;
    execFileSync(process.execPath, ['-e', script], { cwd: scratch, stdio: 'pipe' });
    const project = new Project({ useInMemoryFileSystem: true });
    return names.map((n) => {
      const out = n.replace(/\.xsd$/, '.ts');
      return project.createSourceFile(
        out,
        readFileSync(join(scratch, 'src/generated', out), 'utf8'),
      );
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function statementFor(t: TypeModel, translated: SourceFile[], diagnostics: Diagnostics): Statement {
  const docs = [docText(t)];
  switch (t.kind) {
    case 'object':
      return objectInterface(t, translated, diagnostics, docs);
    case 'enum': {
      const found = translated.map((f) => f.getEnum(t.name)).find((e) => e !== undefined);
      const fromXsd2ts = found?.getMembers().map((m) => m.getName());
      const same = fromXsd2ts && fromXsd2ts.join('|') === t.values.join('|');
      if (!same)
        diagnostics.info(
          'TYPES101',
          `${t.source}#${t.xsdName}`,
          'xsd2ts wrote no matching enum; emitted from the model',
        );
      return {
        kind: StructureKind.Enum,
        name: t.name,
        isExported: true,
        docs,
        members: t.values.map((v) => ({ name: v, value: v })),
      };
    }
    case 'map':
      diagnostics.info(
        'TYPES102',
        `${t.source}#${t.name}`,
        'xsd2ts cannot express an entry map; emitted from the model as a Record',
      );
      return {
        kind: StructureKind.TypeAlias,
        name: t.name,
        isExported: true,
        docs,
        type: `Record<string, ${tsTypeOf(t.value)}>`,
      };
    case 'array':
      diagnostics.info(
        'TYPES103',
        `${t.source}#${t.name}`,
        'xsd2ts emits no type for a single-list wrapper; emitted from the model as an array',
      );
      return {
        kind: StructureKind.TypeAlias,
        name: t.name,
        isExported: true,
        docs,
        type: `${tsTypeOf(t.item)}[]`,
      };
  }
}

function objectInterface(
  t: ObjectTypeModel,
  translated: SourceFile[],
  diagnostics: Diagnostics,
  docs: string[],
): InterfaceDeclarationStructure {
  const cls = translated.map((f) => f.getClass(t.name)).find((c) => c !== undefined);
  if (!cls)
    diagnostics.info(
      'TYPES104',
      `${t.source}#${t.name}`,
      'xsd2ts wrote no class; emitted from the model',
    );
  const properties: OptionalKind<PropertySignatureStructure>[] = t.ownMembers.map((m) => {
    const want = tsMemberType(m);
    const prop = cls?.getProperty(m.name);
    const got = prop?.getTypeNode()?.getText();
    if (cls && (got !== want || prop?.hasQuestionToken() !== m.optional)) {
      diagnostics.info(
        'TYPES105',
        `${t.source}#${t.name}.${m.name}`,
        `xsd2ts wrote \`${m.name}${prop?.hasQuestionToken() ? '?' : ''}: ${got ?? '(nothing)'}\`; emitted from the model as \`${want}\``,
      );
    }
    return {
      name: tsPropertyName(m.name),
      hasQuestionToken: m.optional,
      type: want,
      docs: m.doc ? [m.doc] : [],
    };
  });
  return {
    kind: StructureKind.Interface,
    name: t.name,
    isExported: true,
    docs,
    ...(t.base ? { extends: [t.base] } : {}),
    properties,
  };
}

function docText(t: TypeModel): string {
  const doc = t.doc ? `${t.doc}\n\n` : '';
  const xsdName = t.kind === 'enum' ? t.xsdName : t.name;
  return `${doc}@see ${t.source} \`${xsdName}\` in \`${t.namespace}\``;
}
