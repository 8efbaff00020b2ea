// T7 and T4 withdraw what the roles they remove would be given again by: the SSO's unused T5 and
// T8 tokens, on the transaction (T7) or every transaction of the enterprise (T4), in their commit
// (storage/tokens.ts, deleteUnusedTransactionTokens). Without this index each of them read every
// tenant's live tokens while holding the write. Partial, of the tokens that name a transaction
// (T5's and T8's alone), as 0031's is of C6's: SQLite proves `transaction_id is not null` from a
// query's own terms, where it cannot match a list of kinds bound as parameters. It holds no
// column a redemption changes, so PostgreSQL's redemptions stay HOT updates.
import { sql, type Kysely, type Migration } from 'kysely';

export const transactionTokenLookups: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex('tokens_transaction_sso')
      .on('tokens')
      .columns(['sso_id', 'transaction_id'])
      .where(sql.ref('transaction_id'), 'is not', null)
      .execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('tokens_transaction_sso').ifExists().execute();
  },
};
