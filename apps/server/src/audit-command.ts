// `pal audit --enterprise NAME [--since WHEN] [--json]`: the enterprise's audit records, oldest
// first (docs/events.md). With --json, one JSON object per line (JSON Lines), not
// the single object the other commands print: an audit log can be long, and log shippers and
// `jq` read it line by line while it is read from the database a page at a time.
import type { Command } from 'commander';
import { listAuditRecords, type AuditRecord } from './domain/audit.js';
import type { DomainContext } from './domain/context.js';
import { getEnterpriseByName } from './domain/enterprises.js';
import { isCalendarDay } from './calendar-days.js';

const UNITS_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * `--since`: an ISO-8601 date or date-time (`2025-01-31`, `2025-01-31T12:00:00Z`), or a span back
 * from now: a whole number and `m`, `h` or `d` (`30m`, `24h`, `7d`).
 */
export function parseSince(text: string, now: Date): Date {
  const span = /^(\d{1,6})([mhd])$/.exec(text.trim());
  if (span) return new Date(now.getTime() - Number(span[1]) * UNITS_MS[span[2] as 'm' | 'h' | 'd']);
  const iso = /^(\d{4})-(\d{2})-(\d{2})([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text.trim());
  if (iso) {
    const date = new Date(text.trim());
    // The calendar day written must be one that exists (Date rolls 2030-02-31 over to 3 March).
    const exists = isCalendarDay(Number(iso[1]), Number(iso[2]), Number(iso[3]));
    if (exists && !Number.isNaN(date.getTime())) return date;
  }
  throw new Error(
    `--since: expected an ISO-8601 date or time (2025-01-31, 2025-01-31T12:00:00Z) or a span such as 30m, 24h, 7d; got "${text}"`,
  );
}

/** One line of the text listing. */
function line(record: AuditRecord): string {
  const actor = record.actor ? `${record.actorType}:${record.actor}` : record.actorType;
  const target = record.target ? `${record.targetType}:${record.target}` : '-';
  const details = record.details
    ? Object.entries(record.details)
        .filter(([, value]) => value !== null)
        .map(([name, value]) => `${name}=${String(value)}`)
        .join(' ')
    : '';
  return [
    record.time,
    record.action,
    record.outcome,
    actor,
    target,
    record.ip ?? '-',
    record.requestId ?? '-',
    details,
  ]
    .join('  ')
    .trimEnd();
}

export function addAuditCommand(
  program: Command,
  withDomain: <T>(work: (ctx: DomainContext) => Promise<T>) => Promise<T>,
  stdout: (text: string) => void,
): void {
  program
    .command('audit')
    .description(
      "print an enterprise's audit records, oldest first (--json: one JSON object per line)",
    )
    .requiredOption('--enterprise <name>', 'the enterprise')
    .option('--since <when>', 'from this ISO-8601 date or time, or this far back: 30m, 24h, 7d')
    .option('--json', 'print one JSON object per record, one per line (JSON Lines)')
    .action(async (options: { enterprise: string; since?: string; json?: boolean }) => {
      await withDomain(async (ctx) => {
        const since =
          options.since === undefined ? undefined : parseSince(options.since, ctx.now());
        const owner = await getEnterpriseByName(ctx, options.enterprise);
        let count = 0;
        for await (const record of listAuditRecords(ctx, owner.id, since)) {
          count += 1;
          stdout(options.json ? `${JSON.stringify(record)}\n` : `${line(record)}\n`);
        }
        if (!options.json && count === 0) stdout(`No audit records for "${owner.name}".\n`);
      });
    });
}
