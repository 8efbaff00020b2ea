/**
 * Problems found in the schemas or by a generator, collected and printed together.
 * Codes are stable so docs and tests can name them; errors fail the run.
 */
export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  code: string;
  severity: Severity;
  message: string;
  /** file, optionally with a path inside it, e.g. "schemas/xsd/pal.xsd#Message.type" */
  location: string;
}

/** Not well-formed XML, no xs:schema root, not YAML. */
const UNREADABLE = new Set(['XSD000', 'XSD001', 'OAS000']);

export class Diagnostics {
  readonly items: Diagnostic[] = [];

  error(code: string, location: string, message: string): void {
    this.add({ code, severity: 'error', location, message });
  }
  warning(code: string, location: string, message: string): void {
    this.add({ code, severity: 'warning', location, message });
  }
  info(code: string, location: string, message: string): void {
    this.add({ code, severity: 'info', location, message });
  }
  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }
  /**
   * A schema file that is not XML or YAML at all: what is checked after it would only report
   * what is "missing" from it, so loading stops there and its own error is the one to read.
   */
  get hasUnreadableFile(): boolean {
    return this.items.some((d) => UNREADABLE.has(d.code));
  }
  /** The same problem met twice (one $ref in an operation's JSON and XML content) is said once. */
  private add(diagnostic: Diagnostic): void {
    const same = (d: Diagnostic) =>
      d.code === diagnostic.code &&
      d.location === diagnostic.location &&
      d.message === diagnostic.message;
    if (!this.items.some(same)) this.items.push(diagnostic);
  }
  format(minimum: Severity = 'info'): string {
    const rank: Record<Severity, number> = { info: 0, warning: 1, error: 2 };
    return this.items
      .filter((d) => rank[d.severity] >= rank[minimum])
      .map((d) => `${d.severity} ${d.code} ${d.location}: ${d.message}`)
      .join('\n');
  }
}

export class GenerationError extends Error {
  constructor(readonly diagnostics: Diagnostics) {
    super(`generation failed:\n${diagnostics.format('error')}`);
  }
}
