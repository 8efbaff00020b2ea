/** The readable report of a contract diff. */
import type { DiffReport } from './change.js';
import type { ResolvedBase } from './base.js';

export function formatReport(report: DiffReport, base: ResolvedBase): string {
  const against = `${base.ref} (${base.commit.slice(0, 12)}, ${base.reason})`;
  if (report.changes.length === 0) return `Contract: no change against ${against}. Bump: none.`;
  const width = Math.max(...report.changes.map((c) => c.path.length), 10);
  const rows = report.changes.map(
    (c) => `  ${c.bump.padEnd(5)}  ${c.path.padEnd(Math.min(width, 60))}  ${c.reason}`,
  );
  const count = report.changes.length === 1 ? '1 change' : `${report.changes.length} changes`;
  return [`Contract: ${count} against ${against}. Bump: ${report.bump}.`, ...rows].join('\n');
}
