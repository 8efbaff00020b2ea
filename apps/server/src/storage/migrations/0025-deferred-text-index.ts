// Transactions inserted by group commit's writer are indexed for "contains" searches once per
// batch, just before its COMMIT, instead of once per insert (docs/performance.md, "T1 and the
// text indexes"). The indexes themselves do not change.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const deferredTextIndex: Migration = {
  async up(db: Kysely<any>) {
    await dialectOf(db).deferTransactionTextIndex(db);
  },
  async down(db: Kysely<any>) {
    await dialectOf(db).undeferTransactionTextIndex(db);
  },
};
