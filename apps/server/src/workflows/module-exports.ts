// The export names of a pal's workflow modules, read from their text without running them, so that
// a run of an export the module does not have (T5's `enter`, most often) is answered at once,
// without a sandbox, a worker or the transaction's line of runs (docs/performance.md).
import { init, parse } from 'es-module-lexer';

await init;

/**
 * The module's export names; undefined when they cannot be known from its text alone (an
 * `export * from …` re-exports what another file has, or the text does not parse), and the
 * sandbox must be asked.
 */
export function exportNames(source: string): ReadonlySet<string> | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch {
    return undefined;
  }
  const [imports, exports] = parsed;
  // A re-export other than `export { a, b } from …` (`export * from`, however commented) may
  // carry names only the other file knows.
  const reexportsUnknown = imports.some((i) => {
    const statement = source.slice(i.ss, i.se);
    return i.d === -1 && statement.startsWith('export') && !/^export\s*\{/.test(statement);
  });
  return reexportsUnknown ? undefined : new Set(exports.map((e) => e.n));
}

/**
 * The line (from 1) of the module's static import of `specifier`, as written; undefined when the
 * text has none or does not parse.
 */
export function importLine(source: string, specifier: string): number | undefined {
  let imports: ReturnType<typeof parse>[0];
  try {
    [imports] = parse(source);
  } catch {
    return undefined;
  }
  const found = imports.find((i) => i.d === -1 && i.n === specifier);
  if (found === undefined) return undefined;
  let line = 1;
  for (let i = 0; i < found.ss; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}
