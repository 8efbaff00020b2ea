// The idempotency_keys table (domain/idempotency.ts): which request serves a key, and then the
// answer it gave.
import { sql } from 'kysely';
import { deleteChosenRows } from './chosen-rows.js';
import type { Db } from './database.js';
import { type EveryColumn, preparedQuery } from './prepared-query.js';
import type { IdempotencyKeysTable, IsoDate } from './schema.js';

export type IdempotencyKeyRow = IdempotencyKeysTable;

/**
 * Claims the key for `row.owner` in one statement, so of any number of concurrent claims on any
 * number of nodes exactly one wins: the key is new, or its row has expired, or its row is still
 * unanswered with the same fingerprint and its lease ended at `now` (the request serving it died).
 * True when this claim won.
 */
export async function claimIdempotencyKey(
  db: Db,
  row: IdempotencyKeyRow,
  now: IsoDate,
): Promise<boolean> {
  const claimed = await claimQuery.executeTakeFirst(db, { ...row, now });
  return claimed?.owner === row.owner;
}

const claimQuery = preparedQuery((db, p: IdempotencyKeyRow & { now: IsoDate }) =>
  db
    .insertInto('idempotency_keys')
    .values({
      client_id: p.client_id,
      idempotency_key: p.idempotency_key,
      fingerprint: p.fingerprint,
      owner: p.owner,
      locked_until: p.locked_until,
      status: p.status,
      content_type: p.content_type,
      body: p.body,
      created_at: p.created_at,
      expires_at: p.expires_at,
    } satisfies EveryColumn<IdempotencyKeysTable>)
    .onConflict((oc) =>
      oc
        .columns(['client_id', 'idempotency_key'])
        .doUpdateSet({
          fingerprint: (eb) => eb.ref('excluded.fingerprint'),
          owner: (eb) => eb.ref('excluded.owner'),
          locked_until: (eb) => eb.ref('excluded.locked_until'),
          status: null,
          content_type: null,
          body: null,
          created_at: (eb) => eb.ref('excluded.created_at'),
          expires_at: (eb) => eb.ref('excluded.expires_at'),
        })
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.expires_at', '<=', p.now),
            eb.and([
              eb('idempotency_keys.status', 'is', null),
              eb('idempotency_keys.locked_until', '<=', p.now),
              eb('idempotency_keys.fingerprint', '=', sql.ref<string>('excluded.fingerprint')),
            ]),
          ]),
        ),
    )
    .returning('owner'),
);

export function findIdempotencyKey(
  db: Db,
  clientId: string,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/** Stores the answer of the request that owns the key; false when it no longer owns it. */
export async function storeIdempotentAnswer(
  db: Db,
  clientId: string,
  key: string,
  owner: string,
  answer: { status: number; contentType: string | null; body: string },
): Promise<boolean> {
  return (await storeAnswerQuery.changes(db, { clientId, key, owner, ...answer })) > 0;
}

const storeAnswerQuery = preparedQuery(
  (
    db,
    p: {
      clientId: string;
      key: string;
      owner: string;
      status: number;
      contentType: string | null;
      body: string;
    },
  ) =>
    db
      .updateTable('idempotency_keys')
      .set({ status: p.status, content_type: p.contentType, body: p.body })
      .where('client_id', '=', p.clientId)
      .where('idempotency_key', '=', p.key)
      .where('owner', '=', p.owner),
);

/** Gives the key up (its request answered with a server fault): the next request does the work. */
export async function releaseIdempotencyKey(
  db: Db,
  clientId: string,
  key: string,
  owner: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('client_id', '=', clientId)
    .where('idempotency_key', '=', key)
    .where('owner', '=', owner)
    .where('status', 'is', null)
    .execute();
}

/** Removes at most `limit` keys that expired at `now`; how many. */
export function deleteExpiredIdempotencyKeys(db: Db, now: IsoDate, limit: number): Promise<number> {
  const key = ['client_id', 'idempotency_key'] as const;
  const expired = db.selectFrom('idempotency_keys').select(key).where('expires_at', '<=', now);
  return deleteChosenRows(db, 'idempotency_keys', key, expired, limit);
}
