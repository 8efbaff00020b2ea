/**
 * Emits packages/client/src/generated: openapi-generator's typescript-fetch client
 * (the 4.3.1 JAR shipped inside @openapitools/openapi-generator-cli@1.0.18-4.3.1,
 * run offline with the machine's Java), post-processed with ts-morph:
 *  - its models are dropped: the APIs take and return the types of @pal-workflow/types
 *    (written once, from the XSDs), and the JSON on the wire is those types as they are,
 *    so the generated FromJSON/ToJSON mappers (and the `InlineObject…` form models) go too;
 *  - files renamed *.gen.ts, relative imports given explicit `.gen.js` / `index.gen.js`
 *    specifiers (the packages are ESM with NodeNext resolution);
 *  - simple (string/boolean/int) responses read as JSON instead of raw text, because
 *    the hand-written entry point always asks for JSON or XML and decodes XML to JSON;
 *  - DOM-only type names (`GlobalFetch`, `RequestCredentials`, `BodyInit`) replaced by ones that
 *    Node's fetch typings also have, and `override` added where the strict base config wants it.
 * Plus operations.gen.ts: for each operation, its path pattern and root elements, which
 * the entry point's XML middleware needs to encode bodies and decode responses, and the
 * default roots.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Project, SyntaxKind } from 'ts-morph';
import type { GenerateContext } from '../context.js';
import type { ApiModel } from '../model/operation-model.js';
import type { EmittedFile } from '../write.js';

const GENERATOR = 'emit/client.ts (openapi-generator 4.3.1 typescript-fetch + ts-morph)';

export function emitClient(
  ctx: GenerateContext,
  document: Record<string, unknown>,
  api: ApiModel,
): EmittedFile[] {
  const scratch = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  try {
    const spec = join(scratch, 'openapi.json');
    writeFileSync(spec, JSON.stringify(document));
    const out = join(scratch, 'out');
    execFileSync(
      ctx.java,
      [
        '-jar',
        ctx.openapiGeneratorJar,
        'generate',
        '-g',
        'typescript-fetch',
        '-i',
        spec,
        '-o',
        out,
        '--additional-properties=supportsES6=true,typescriptThreePlus=true',
      ],
      { stdio: 'pipe' },
    );
    const files = listTs(out)
      .map((path) => ({ rel: relative(out, path), text: readFileSync(path, 'utf8') }))
      .filter((f) => !f.rel.startsWith('models/'));
    return [...postProcess(ctx, files), operationsFile(ctx, api)];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function listTs(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      if (name.startsWith('.')) return [];
      return statSync(full).isDirectory() ? listTs(full) : name.endsWith('.ts') ? [full] : [];
    });
}

function postProcess(ctx: GenerateContext, files: { rel: string; text: string }[]): EmittedFile[] {
  const project = new Project({ useInMemoryFileSystem: true });
  const dirs = new Set(files.map((f) => f.rel.split('/').slice(0, -1).join('/')).filter(Boolean));
  return files.map(({ rel, text }) => {
    const fixed = text
      .replace(
        /new runtime\.TextApiResponse\(response\) as any/g,
        'new runtime.JSONApiResponse<any>(response)',
      )
      .replace(
        /GlobalFetch\['fetch'\]|WindowOrWorkerGlobalScope\['fetch'\]/g,
        '(url: string, init: RequestInit) => Promise<Response>',
      )
      // DOM-only names, so the client also compiles against Node's own fetch typings.
      .replace(/\bRequestCredentials\b/g, "RequestInit['credentials']")
      .replace(/\bBodyInit\b/g, "NonNullable<RequestInit['body']>")
      .replace(/^(\s+)name: (['"])RequiredError\2/m, '$1override name: $2RequiredError$2')
      .replace(/window\.fetch\.bind\(window\)/g, 'fetch');
    const source = project.createSourceFile(rel, withoutModels(rel, fixed), { overwrite: true });
    const here = rel.split('/').slice(0, -1).join('/');
    for (const decl of source.getExportDeclarations())
      if (decl.getModuleSpecifierValue()?.replace(/\/$/, '') === './models') decl.remove();
    const models = source
      .getImportDeclarations()
      .find((decl) => decl.getModuleSpecifierValue() === '../models');
    if (models) {
      const index = models.getChildIndex();
      const names = models.getNamedImports().map((n) => n.getName());
      models.remove();
      const referenced = new Set(
        source.getDescendantsOfKind(SyntaxKind.Identifier).map((id) => id.getText()),
      );
      const used = names.filter((name) => referenced.has(name));
      if (used.length)
        source.insertImportDeclaration(index, {
          isTypeOnly: true,
          moduleSpecifier: '@pal-workflow/types',
          namedImports: used,
        });
    }
    for (const decl of [...source.getImportDeclarations(), ...source.getExportDeclarations()]) {
      const spec = decl.getModuleSpecifierValue();
      if (!spec?.startsWith('.')) continue;
      const target = join(here, spec);
      const folder = spec === './' || spec === '.' || dirs.has(target);
      decl.setModuleSpecifier(
        folder ? `${spec.replace(/\/$/, '')}/index.gen.js` : `${spec}.gen.js`,
      );
    }
    return {
      path: `${ctx.out.client}/${rel.replace(/\.ts$/, '.gen.ts')}`,
      // The old templates predate strict checks this workspace turns on.
      content: `/* eslint-disable */\n${source.getFullText()}`,
      generator: GENERATOR,
      sources: ['schemas/openapi/operations.yaml', 'schemas/xsd/*.xsd'],
    };
  });
}

/**
 * The APIs call a model's FromJSON on every answer and ToJSON on every body. The types of
 * @pal-workflow/types are the JSON wire form itself (absent members left out, `null` only for
 * nillable ones), so both become the identity: the answer is read as JSON of the declared type.
 */
function withoutModels(rel: string, text: string): string {
  if (!rel.startsWith('apis/')) return text;
  const out = text
    .replace(
      /new runtime\.JSONApiResponse\(response, \(jsonValue\) => (\w+)FromJSON\(jsonValue\)\)/g,
      'new runtime.JSONApiResponse<$1>(response)',
    )
    .replace(
      /new runtime\.JSONApiResponse\(response, \(jsonValue\) => jsonValue\.map\((\w+)FromJSON\)\)/g,
      'new runtime.JSONApiResponse<Array<$1>>(response)',
    )
    .replace(/\b\w+ToJSON\((requestParameters\.\w+)\)/g, '$1');
  const left = /^(?!import|\s+\w+(From|To)JSON,$).*\b\w+(From|To)JSON\b.*$/m.exec(out);
  // A template change must not leave a mapper call behind: fail the run rather than emit it.
  if (left) throw new Error(`emit/client.ts: ${rel} still maps a model: ${left[0].trim()}`);
  return out;
}

function operationsFile(ctx: GenerateContext, api: ApiModel): EmittedFile {
  // Each search type's headers once: every operation that searches by the type shares them.
  const searches = new Map<string, string[]>();
  for (const op of api.operations)
    if (op.search)
      searches.set(
        op.search.type,
        op.search.headers.map((h) => h.name),
      );
  const searchRows = [...searches].map(([type, names]) => `  ${type}: ${JSON.stringify(names)},`);
  const rows = api.operations.map((op) => {
    const pattern = `^/${op.root === 'service' ? '{service}' : '{user}'}${op.path.replace(/\{\w+\}/g, '[^/]+')}$`;
    return `  { id: ${JSON.stringify(op.id)}, method: ${JSON.stringify(op.method)}, root: ${JSON.stringify(op.root)}, pattern: ${JSON.stringify(pattern)}, bodyRoot: ${
      op.body?.kind === 'typed' ? JSON.stringify(op.body.root) : 'undefined'
    }, responseRoot: ${JSON.stringify(op.response.root)}, searchHeaders: ${
      op.search ? `searchHeaders.${op.search.type}` : '[]'
    } },`;
  });
  return {
    path: `${ctx.out.client}/operations.gen.ts`,
    content: `import type { RootName } from '@pal-workflow/validators';\n\n/** Where each operation's XML bodies and responses begin, and its search headers: read by the wire middleware. */\nexport interface ClientOperation { id: string; method: 'GET' | 'POST'; root: 'service' | 'user'; pattern: string; bodyRoot: RootName | undefined; responseRoot: RootName; searchHeaders: readonly string[] }\n\n/** The headers of each search type. */\nconst searchHeaders = {\n${searchRows.join('\n')}\n} as const;\n\nexport const clientOperations: readonly ClientOperation[] = [\n${rows.join('\n')}\n];\n\n/** The first path segments of a service unless it is configured otherwise (x-roots of the OpenAPI document). */\nexport const defaultRoots = ${JSON.stringify(api.roots)} as const;\n`,
    generator: 'emit/client.ts',
    sources: ['schemas/openapi/operations.yaml'],
  };
}
