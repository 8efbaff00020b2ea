// The pals and pal_versions tables: deployment writes, look-ups and the P1/C1 search.
import type { Db } from './database.js';
import { dialectOf } from './adapter-dialect.js';
import { insertPalDocuments, type PalDocumentWrite } from './pal-documents.js';
import type { NewPal, PalRow } from './schema.js';
import type { TextFilter } from './text-filters.js';

/** What P1 and C1 ask of the pals table (docs/decisions.md, "Searches"). */
export interface PalRowQuery {
  enterpriseId: string;
  texts: readonly TextFilter[];
  /** OR the text filters instead of AND. */
  matchAny: boolean;
  includeTest: boolean;
  includeInstalled: boolean;
  consoleOnly: boolean;
  offset: number;
  limit: number;
}

/** The columns a deployment writes (everything but the keys and the creation date). */
export type PalColumns = Omit<NewPal, 'enterprise_id' | 'id' | 'create_date'>;

export interface PalVersionRow {
  version: number;
  manifest: string;
  files: string;
  contentHash: string;
  deployedAt: string;
}

export function findPalRow(
  db: Db,
  enterpriseId: string,
  palId: string,
): Promise<PalRow | undefined> {
  return db
    .selectFrom('pals')
    .selectAll()
    .where('enterprise_id', '=', enterpriseId)
    .where('id', '=', palId)
    .executeTakeFirst();
}

/**
 * Writes a deployment in one database transaction: the pal's current columns (inserted or
 * replaced) and its version row. `decide` sees the current version (or undefined) and returns the
 * columns to write, or undefined to write nothing.
 */
export function writePalDeployment<T>(
  db: Db,
  enterpriseId: string,
  palId: string,
  decide: (current: Pick<PalRow, 'version' | 'content_hash' | 'create_date'> | undefined) =>
    | {
        columns: PalColumns;
        files: string;
        documents: readonly PalDocumentWrite[];
        createDate: string;
        result: T;
      }
    | { result: T },
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('pals')
      .select(['version', 'content_hash', 'create_date'])
      .where('enterprise_id', '=', enterpriseId)
      .where('id', '=', palId)
      .executeTakeFirst();
    const decision = decide(current);
    if (!('columns' in decision)) return decision.result;
    const { columns, files, documents, createDate } = decision;
    if (current) {
      await trx
        .updateTable('pals')
        .set(columns)
        .where('enterprise_id', '=', enterpriseId)
        .where('id', '=', palId)
        .execute();
    } else {
      await trx
        .insertInto('pals')
        .values({ enterprise_id: enterpriseId, id: palId, create_date: createDate, ...columns })
        .execute();
    }
    await trx
      .insertInto('pal_versions')
      .values({
        enterprise_id: enterpriseId,
        pal_id: palId,
        version: columns.version,
        manifest: columns.manifest,
        files,
        content_hash: columns.content_hash,
        deployed_at: columns.last_modified_date,
      })
      .execute();
    await insertPalDocuments(
      trx,
      { enterpriseId, palId, version: columns.version, now: columns.last_modified_date },
      documents,
    );
    return decision.result;
  });
}

/** The manifest and workflow files (JSON texts) of one deployed version, or undefined. */
export function findPalVersion(
  db: Db,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<{ manifest: string; files: string } | undefined> {
  return db
    .selectFrom('pal_versions')
    .select(['manifest', 'files'])
    .where('enterprise_id', '=', enterpriseId)
    .where('pal_id', '=', palId)
    .where('version', '=', version)
    .executeTakeFirst();
}

export async function setPalUndeployed(
  db: Db,
  enterpriseId: string,
  palId: string,
  now: string,
): Promise<void> {
  await db
    .updateTable('pals')
    .set({ deployed: 0, last_modified_date: now })
    .where('enterprise_id', '=', enterpriseId)
    .where('id', '=', palId)
    .execute();
}

/** Every pal of the enterprise, ordered by id. */
export function listPalRows(db: Db, enterpriseId: string): Promise<PalRow[]> {
  return db
    .selectFrom('pals')
    .selectAll()
    .where('enterprise_id', '=', enterpriseId)
    .orderBy('id')
    .execute();
}

/** One page of the pals matching the query, ordered by id, and the number of all. */
export async function searchPalRows(
  db: Db,
  q: PalRowQuery,
): Promise<{ rows: PalRow[]; total: number }> {
  const filtered = db
    .selectFrom('pals')
    .where('enterprise_id', '=', q.enterpriseId)
    .$if(!q.includeTest, (b) => b.where('test', '=', 0))
    .$if(!q.includeInstalled, (b) => b.where('installed', '=', 0))
    .$if(q.consoleOnly, (b) => b.where('mode_console', '=', 1));
  // Through each engine's trigram index (migration 0006); the same rows as LIKE over the
  // enterprise's pals.
  const query = dialectOf(db).wherePalTextsMatch(filtered, q.texts, q.matchAny);

  const [count, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    query.selectAll().orderBy('id').limit(q.limit).offset(q.offset).execute(),
  ]);
  return { rows, total: Number(count.total) };
}
