// The tables whose rows read caches hold: pals (domain/read-cache.ts, through pal_texts for their
// searches) and what authenticates a client (http/credentials.ts). Only a write to one of them
// moves a dialect's change stamp for this process's own writes, so that the pals stay cached
// while transactions, runs and tokens are written (every T1, T5 and T6 reads its pal). No trigger
// or cascade writes one of them from a write to another table; a new one must keep it so, or
// join the list (and migration 0004's triggers on PostgreSQL).
export const READ_CACHED_TABLES: ReadonlySet<string> = new Set([
  'enterprises',
  'api_clients',
  'pals',
  'pal_versions',
  'pal_texts',
]);

/**
 * The table an INSERT, UPDATE or DELETE names first, which is the one it writes: quoted or not,
 * after PostgreSQL's ONLY and a schema's name if given.
 */
const WRITE_TARGET =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+(?:only\s+)?(?:(?:"[^"]+"|[A-Za-z_]\w*)\s*\.\s*)?(?:"([^"]+)"|([A-Za-z_]\w*))/i;

/** Statements that write no table of their own: reads, settings, transaction control. */
const WRITES_NOTHING =
  /^\s*(?:select|show|set|pragma|explain|begin|start|commit|end|rollback|savepoint|release)\b/i;

/**
 * False only for a statement known to write no cached table: a read, a setting, transaction
 * control, or an INSERT, UPDATE or DELETE of another table. Anything else (WITH …, DDL, a
 * statement of another shape) may, and counts. A read's functions (pg_notify) write no table.
 */
export function mayWriteCachedTable(sql: string): boolean {
  if (WRITES_NOTHING.test(sql)) return false;
  const target = WRITE_TARGET.exec(sql);
  if (!target) return true;
  return READ_CACHED_TABLES.has((target[1] ?? target[2])!.toLowerCase());
}
