// PostgreSQL: a larger sample of the folded texts that "contains" searches filter on, so that the
// planner's guess of how many rows a needle matches holds. With the default (a histogram of 100
// values), a needle in 5 % of a million names was estimated anywhere from 100 rows to 101,010
// over twelve ANALYZEs; guessed at 100, its page was read through the trigram index and sorted
// (50,000 rows, 50 ms) instead of walking the creation-order index to the first 25 (0.5 ms).
// With 1,000 the same twelve estimates stayed within 4 % (docs/performance.md). SQLite plans
// its FTS5 searches otherwise and has nothing to change.
import { sql, type Kysely, type Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

const COLUMNS = ['name_key', 'description_key', 'category_key'];

async function setStatistics(db: Kysely<any>, target: number): Promise<void> {
  if (dialectOf(db).name !== 'postgres') return;
  for (const column of COLUMNS)
    await sql`alter table transactions alter column ${sql.ref(column)} set statistics ${sql.raw(String(target))}`.execute(
      db,
    );
}

export const textStatistics: Migration = {
  async up(db: Kysely<any>) {
    await setStatistics(db, 1000);
  },
  async down(db: Kysely<any>) {
    // -1: the server's default_statistics_target again.
    await setStatistics(db, -1);
  },
};
