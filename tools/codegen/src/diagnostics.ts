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

export class Diagnostics {
  readonly items: Diagnostic[] = [];

  error(code: string, location: string, message: string): void {
    this.items.push({ code, severity: 'error', location, message });
  }
  warning(code: string, location: string, message: string): void {
    this.items.push({ code, severity: 'warning', location, message });
  }
  info(code: string, location: string, message: string): void {
    this.items.push({ code, severity: 'info', location, message });
  }
  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
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
