// The outbox_messages table (schema.ts: OutboxMessagesTable): writing messages inside the
// transaction that causes them, and the dispatcher's claim, lease and outcome. A message is
// `pending` until delivered or given up (`failed`); while a node holds it, its next_attempt_at
// is the end of the lease and its `claim` the node's random token, so a node killed mid-send
// frees the message when the lease runs out and a late outcome of a lost lease changes nothing.
import { sql, type Selectable } from 'kysely';
import type { Db } from './database.js';
import { type EveryColumn, preparedQuery } from './prepared-query.js';
import { dialectOf } from './adapter-dialect.js';
import { chosenRows, deleteChosenRows } from './chosen-rows.js';
import type { IsoDate, OutboxKind, OutboxMessagesTable } from './schema.js';

export type OutboxMessageRow = Selectable<OutboxMessagesTable>;

export interface NewOutboxMessage {
  id: string;
  kind: OutboxKind;
  enterpriseId: string | null;
  endpointId?: string;
  eventType?: string;
  payload: string;
}

/** Rows per INSERT statement (SQLite allows 32766 bound values; a row has 12). */
const INSERT_CHUNK = 500;

/**
 * Writes messages as pending and due at `now`, and announces them (delivered to the dispatchers
 * once the surrounding transaction commits). Call it inside the transaction of the change.
 */
export async function insertOutboxMessages(
  db: Db,
  messages: readonly NewOutboxMessage[],
  now: IsoDate,
): Promise<void> {
  if (messages.length === 0) return;
  const rows = messages.map((m) => ({
    id: m.id,
    kind: m.kind,
    enterpriseId: m.enterpriseId,
    endpointId: m.endpointId ?? null,
    eventType: m.eventType ?? null,
    payload: m.payload,
    now,
  }));
  if (rows.length === 1) await insertOneQuery.run(db, rows[0]!);
  else
    for (let i = 0; i < rows.length; i += INSERT_CHUNK)
      await db
        .insertInto('outbox_messages')
        .values(rows.slice(i, i + INSERT_CHUNK).map(pendingRow))
        .execute();
  await dialectOf(db).announceOutbox(db);
}

/** A message as insertOutboxMessages writes it, its optional members null. */
interface PendingMessage {
  id: string;
  kind: OutboxKind;
  enterpriseId: string | null;
  endpointId: string | null;
  eventType: string | null;
  payload: string;
  now: IsoDate;
}

/** The row of a message pending and due at `now` (values, or a prepared query's slots). */
function pendingRow(m: PendingMessage) {
  return {
    id: m.id,
    kind: m.kind,
    enterprise_id: m.enterpriseId,
    endpoint_id: m.endpointId,
    event_type: m.eventType,
    payload: m.payload,
    status: 'pending' as const,
    attempts: 0,
    next_attempt_at: m.now,
    claim: null,
    last_error: null,
    retries_since: m.now,
    created_at: m.now,
    finished_at: null,
  } satisfies EveryColumn<OutboxMessagesTable>;
}

/** One message, the common case (an event of an enterprise with one endpoint, a mail). */
const insertOneQuery = preparedQuery((db, p: PendingMessage) =>
  db.insertInto('outbox_messages').values(pendingRow(p)),
);

/**
 * A line of messages that a node serves with slots of its own (outbox/dispatcher.ts): mails,
 * completion jobs, and the webhooks of each endpoint, so that a slow receiver holds only its own.
 */
export interface OutboxLane {
  kind: OutboxKind;
  /** The endpoint of a webhook lane; null for mails and completion jobs. */
  endpointId: string | null;
}

export interface ClaimOptions {
  claim: string;
  now: IsoDate;
  leaseUntil: IsoDate;
  limit: number;
  lane: OutboxLane;
}

/**
 * Takes up to `limit` pending messages of `lane` due at `now`, for `leaseUntil`: each gets the
 * claim token and one more attempt. On PostgreSQL rows another node is taking right now are
 * skipped. The UPDATE names only the ids (chosen-rows.ts says why: a second "pending and due"
 * test cost 2.5 ms a claim on SQLite under a backlog of 10,000).
 */
export async function claimDueMessages(db: Db, options: ClaimOptions): Promise<OutboxMessageRow[]> {
  return claimDueQuery(db, options).execute();
}

/** claimDueMessages' statement, not run (its plan is tested). */
export function claimDueQuery(db: Db, options: ClaimOptions) {
  const { claim, now, leaseUntil, limit, lane } = options;
  const due = chosenRows(
    db,
    db
      .selectFrom('outbox_messages')
      .select('id')
      .where('status', '=', 'pending')
      .where('kind', '=', lane.kind)
      .where('endpoint_id', lane.endpointId === null ? 'is' : '=', lane.endpointId)
      .where('next_attempt_at', '<=', now)
      .orderBy('next_attempt_at'),
    limit,
  );
  return db
    .updateTable('outbox_messages')
    .set({ claim, next_attempt_at: leaseUntil, attempts: sql<number>`attempts + 1` })
    .where('id', 'in', due)
    .returningAll();
}

/**
 * Moves the lease of a message this node still holds (its claim) to `leaseUntil`; false when the
 * claim is gone (the lease ran out and another took it, or the message was removed).
 */
export async function extendLease(
  db: Db,
  id: string,
  claim: string,
  leaseUntil: IsoDate,
): Promise<boolean> {
  const result = await db
    .updateTable('outbox_messages')
    .set({ next_attempt_at: leaseUntil })
    .where('id', '=', id)
    .where('claim', '=', claim)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A lane's first pending message: when it falls due (or its lease ends); null when none waits. */
export interface LaneHead extends OutboxLane {
  due: IsoDate | null;
}

/**
 * When each lane's first pending message falls due: mails, completion jobs, and every endpoint
 * with pending webhooks. A walk of the lane index (migration 0028) from one such endpoint to the
 * next: two index seeks per endpoint, however many messages each has waiting.
 */
export async function laneHeads(db: Db): Promise<LaneHead[]> {
  const { rows } = await laneHeadsQuery().execute(db);
  return rows.map((row) => ({ kind: row.kind, endpointId: row.endpoint_id, due: row.due }));
}

/** laneHeads' statement, not run (its plan is tested). */
export function laneHeadsQuery() {
  const pending = (kind: OutboxKind) => sql`m.status = 'pending' and m.kind = ${sql.lit(kind)}`;
  const head = (kind: OutboxKind) => sql`(select m.next_attempt_at from outbox_messages m
    where ${pending(kind)} and m.endpoint_id is null order by m.next_attempt_at limit 1)`;
  return sql<{ kind: OutboxKind; endpoint_id: string | null; due: IsoDate | null }>`
    with recursive lanes(endpoint_id) as (
      select (select m.endpoint_id from outbox_messages m
              where ${pending('webhook')} and m.endpoint_id is not null
              order by m.endpoint_id limit 1)
      union all
      select (select m.endpoint_id from outbox_messages m
              where ${pending('webhook')} and m.endpoint_id > lanes.endpoint_id
              order by m.endpoint_id limit 1)
      from lanes where lanes.endpoint_id is not null
    )
    select 'webhook' as kind, lanes.endpoint_id,
           (select m.next_attempt_at from outbox_messages m
            where ${pending('webhook')} and m.endpoint_id = lanes.endpoint_id
            order by m.next_attempt_at limit 1) as due
    from lanes where lanes.endpoint_id is not null
    union all
    select 'mail', null, ${head('mail')}
    union all
    select 'completion', null, ${head('completion')}`;
}

/** How many pending messages are due at `now` (not held by a node). */
export async function countDueMessages(db: Db, now: IsoDate): Promise<number> {
  const row = await db
    .selectFrom('outbox_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The outcome of one attempt, recorded only while `claim` still holds the message. */
export type AttemptOutcome =
  | { kind: 'delivered'; now: IsoDate; clearPayload: boolean }
  | { kind: 'retry'; at: IsoDate; error: string }
  | { kind: 'failed'; now: IsoDate; error: string };

/** Records the outcome; false when the lease was lost (another node has the message now). */
export async function recordAttempt(
  db: Db,
  id: string,
  claim: string,
  outcome: AttemptOutcome,
): Promise<boolean> {
  if (outcome.kind === 'delivered') {
    const delivered = outcome.clearPayload ? deliveredClearedQuery : deliveredQuery;
    return (await delivered.changes(db, { id, claim, now: outcome.now })) > 0;
  }
  const update =
    outcome.kind === 'retry'
      ? { next_attempt_at: outcome.at, last_error: outcome.error }
      : { status: 'failed' as const, finished_at: outcome.now, last_error: outcome.error };
  const result = await db
    .updateTable('outbox_messages')
    .set({ ...update, claim: null })
    .where('id', '=', id)
    .where('claim', '=', claim)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A delivery recorded (every message's last statement), its payload kept or cleared. */
function deliveredUpdate(clearPayload: boolean) {
  return preparedQuery((db, p: { id: string; claim: string; now: IsoDate }) =>
    db
      .updateTable('outbox_messages')
      .set({
        status: 'delivered',
        finished_at: p.now,
        last_error: null,
        ...(clearPayload ? { payload: '' } : {}),
        claim: null,
      })
      .where('id', '=', p.id)
      .where('claim', '=', p.claim)
      .where('status', '=', 'pending'),
  );
}
const deliveredQuery = deliveredUpdate(false);
const deliveredClearedQuery = deliveredUpdate(true);

export async function findOutboxMessage(db: Db, id: string): Promise<OutboxMessageRow | undefined> {
  return db.selectFrom('outbox_messages').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A finished message due again at `now`, with a fresh retry window; false when it is pending. */
export async function requeueMessage(db: Db, id: string, now: IsoDate): Promise<boolean> {
  const result = await db
    .updateTable('outbox_messages')
    .set({
      status: 'pending',
      next_attempt_at: now,
      retries_since: now,
      finished_at: null,
      claim: null,
    })
    .where('id', '=', id)
    .where('status', '<>', 'pending')
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await dialectOf(db).announceOutbox(db);
  return true;
}

/** The latest messages of an endpoint, newest first. */
export async function listEndpointMessages(
  db: Db,
  endpointId: string,
  limit: number,
): Promise<OutboxMessageRow[]> {
  return db
    .selectFrom('outbox_messages')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Removes at most `limit` delivered and failed messages that finished before `before`; how many. */
export function deleteFinishedMessages(db: Db, before: IsoDate, limit: number): Promise<number> {
  const finished = db
    .selectFrom('outbox_messages')
    .select('id')
    .where('finished_at', '<', before)
    .where('status', '<>', 'pending');
  return deleteChosenRows(db, 'outbox_messages', ['id'], finished, limit);
}
