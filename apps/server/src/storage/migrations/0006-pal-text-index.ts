// The index behind the "contains" filters of P1 and C1 (name, description, category, publisher,
// against the folded `_key` columns of pals), as T2's transactions have had since 0001. What it
// is differs by engine and lives in the dialect: PostgreSQL, a pg_trgm GIN index per column;
// SQLite, an FTS5 trigram index over a side table that gives each pal a stable integer key.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const palTextIndex: Migration = {
  async up(db: Kysely<any>) {
    await dialectOf(db).createPalTextIndex(db);
  },
  async down(db: Kysely<any>) {
    await dialectOf(db).dropPalTextIndex(db);
  },
};
