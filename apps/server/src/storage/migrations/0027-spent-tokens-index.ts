// The token sweep finds used tokens through an index of their own. Without it each batch of the
// sweep (domain/sweep-batches.ts) passed over every live token again to find the used ones. The
// index is partial: it holds only tokens used and not yet swept (about a minute's redemptions),
// so a redemption adds one entry to a small index and an issue adds none.
import { sql, type Kysely, type Migration } from 'kysely';

export const spentTokensIndex: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('tokens_used')
      .on('tokens')
      .column('used_at')
      .where(sql.ref('used_at'), 'is not', null)
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('tokens_used').execute();
  },
};
