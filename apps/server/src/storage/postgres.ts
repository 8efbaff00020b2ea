// Everything that only PostgreSQL accepts lives here: the connection pool, the pg_trgm indexes
// that make "contains" searches fast over millions of rows, the change stamp that tells read
// caches of several nodes when to start afresh, and how PostgreSQL reports errors.
import { Kysely, PostgresDialect, sql, type Expression } from 'kysely';
import pg from 'pg';
import { mayWriteCachedTable } from './cached-tables.js';
import { likeContains } from './text-filters.js';
import {
  cappedCount,
  type CappedCount,
  wherePalTextsLike,
  type StorageDialect,
  type TransactionTextColumn,
} from './storage-dialect.js';
import type { DatabaseSchema } from './schema.js';
import { RATE_COUNT_TABLE } from './rate-counts.js';

/** PostgreSQL's type oid of int8 (bigint): what count(*) and bigserial columns return. */
const INT8_OID = 20;

// One GIN trigram index per column, as on SQLite (storage/sqlite.ts says why not one shared index).
const TEXT_INDEXES = {
  name_key: 'transactions_name_trgm',
  description_key: 'transactions_description_trgm',
  category_key: 'transactions_category_trgm',
} as const satisfies Record<TransactionTextColumn, string>;

// The same for the folded texts of pals that P1 and C1 search (migration 0006).
const PAL_TEXT_INDEXES = {
  name_key: 'pals_name_key_trgm',
  description_key: 'pals_description_key_trgm',
  category_key: 'pals_category_key_trgm',
  publisher_key: 'pals_publisher_key_trgm',
} as const;

/** How often a node reads the database's change stamp (while its read caches ask for it). */
const STAMP_POLL_MS = 100;
/** A stamp read longer ago than this is not trusted: caches are bypassed until a poll succeeds. */
const STAMP_TRUST_MS = 1000;
/** Polling pauses when nobody asked for the stamp this long (an idle node, the CLI). */
const STAMP_IDLE_MS = 5000;
/**
 * The longest another node's committed change to a cached table stays unseen: one poll interval,
 * plus the poll's own time (under STAMP_TRUST_MS, else nothing is cached). docs/decisions.md.
 */
export const POSTGRES_CHANGE_BOUND_MS = 250;

/**
 * What tells a node whether cached data may be stale. `value` is the `change_stamp` row, which
 * triggers move in the same transaction as every write to a cached table (migration 0004), so
 * a stamp read after another node's commit comes with that commit's data. Own writes to a cached
 * table (storage/cached-tables.ts) are counted as they complete, so this node sees them at once.
 */
interface StampTracking {
  value: number | undefined;
  /** performance.now() of the last successful poll. */
  readAt: number;
  askedAt: number;
  ownWrites: number;
  polling: Promise<void> | undefined;
  timer: NodeJS.Timeout | undefined;
  readonly pool: pg.Pool;
}

const stampTracking = new WeakMap<object, StampTracking>();

/** Per database handle (its adapter): the end of the last exclusive run started on this node. */
const exclusiveRuns = new WeakMap<object, Promise<void>>();

/** `work` under the session advisory lock named `name`, or undefined when another holds it. */
function lockedRun<T>(
  db: Kysely<any>,
  name: string,
  work: () => Promise<T>,
): Promise<T | undefined> {
  return db.connection().execute(async (connection) => {
    const key = sql`hashtext(${`pal:${name}`})`;
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_lock(${key}) as locked`.execute(connection);
    if (!rows[0]?.locked) return undefined;
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(connection);
    }
  });
}

/**
 * What a request gets when the pool had no free connection within its timeout: 503, the service
 * being too busy for now (docs/decisions.md, "Errors"), not a fault of the server's.
 */
export class DatabaseBusyError extends Error {
  readonly statusCode = 503;
  readonly code = 'DATABASE_BUSY';
  constructor() {
    super('the database had no free connection in time: try again shortly');
  }
}

/**
 * What a request gets when PostgreSQL cannot be reached or ended its connection (a restart, a
 * failover): 503, as for a full pool, not a fault of the server's. The pool reconnects on its own.
 */
export class DatabaseUnavailableError extends Error {
  readonly statusCode = 503;
  readonly code = 'DATABASE_UNAVAILABLE';
  constructor(cause: unknown) {
    super('the database cannot be reached right now: try again shortly', { cause });
  }
}

/**
 * SQLSTATE's connection exceptions but 08P01 (a protocol violation, which a statement of ours may
 * cause), 57P01 to 57P03 (the server shutting down, crashed, or not yet accepting), and Node's
 * errors of a socket that could not connect or was cut.
 */
const CONNECTION_LOST = new Set([
  ...['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03'],
  ...['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'],
]);

/** Whether an error says the connection is gone (CONNECTION_LOST, or pg's own words for it), not
 * that the statement failed. */
export function isConnectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return CONNECTION_LOST.has(code);
  return /^Connection terminated|is not queryable|^Connection ended/.test(error.message);
}

/** pg-pool's error when no connection came within connectionTimeoutMillis. */
function isPoolTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'timeout exceeded when trying to connect';
}

/**
 * Opens a pool of at most `poolSize` connections to the database at `url`. Connections are made
 * when first needed: checkReachable() (storage/database.ts) is what tells at start-up.
 */
export function openPostgres(url: string, poolSize: number): Kysely<DatabaseSchema> {
  // Counts this node's completed writes (see StampTracking). Kysely runs every query through
  // `client.query(text, values)`, which answers a result naming its command.
  class CountingClient extends pg.Client {
    /** A cached table was written since this connection's last COMMIT: that COMMIT counts too. */
    private cachedWritesUncommitted = false;

    constructor(config?: pg.ClientConfig) {
      super(config);
      // pg-pool listens for the errors of idle connections only. One that the server ends while a
      // request holds it (a restart, a failover) must fail that request's queries, which it does
      // on its own, and not the process: unheard, the 'error' event ended it. The pool drops
      // such a connection when it comes back (it is no longer queryable).
      this.on('error', () => {});
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      this.query = ((...args: unknown[]) => {
        const result = query(...args);
        if (!(result instanceof Promise)) return result;
        const [first] = args;
        const text = typeof first === 'string' ? first : (first as { text?: unknown })?.text;
        return result.then(
          (r: { command?: string } | undefined) => {
            // A statement counts when its text may write a cached table (storage/cached-tables.ts;
            // by its command, a WITH … DELETE is a SELECT), and so does the COMMIT after it, when
            // its writes become visible. A multi-statement text answers an array: its text decides.
            // (`tracking` is set below, before the pool makes its first client.)
            const command = Array.isArray(r) ? undefined : r?.command;
            if (command === 'COMMIT') {
              if (this.cachedWritesUncommitted) tracking.ownWrites += 1;
              this.cachedWritesUncommitted = false;
            } else if (typeof text !== 'string' || mayWriteCachedTable(text)) {
              tracking.ownWrites += 1;
              this.cachedWritesUncommitted = true;
            }
            return r;
          },
          (error: unknown) => {
            throw isConnectionLost(error) ? new DatabaseUnavailableError(error) : error;
          },
        );
      }) as typeof this.query;
    }
  }
  const pool = new pg.Pool({
    Client: CountingClient as unknown as typeof pg.Client,
    connectionString: url,
    max: poolSize,
    // Fail at start-up (and under an outage) within seconds instead of hanging on a dead host.
    connectionTimeoutMillis: 5000,
    // count(*) and the bigserial `seq` are int8, which pg returns as strings (they may exceed
    // 2^53); the schema's counts and sequence numbers stay far below that, so read them as numbers.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID && format !== 'binary'
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle connection that the server drops (a restart, a failover) is an error event on the
  // pool; without a listener it would end the process. The next query reconnects.
  pool.on('error', () => {});
  // Kysely asks for a connection with the promise form; pg-pool's own query() uses the callback.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  pool.connect = ((...args: unknown[]) => {
    if (args.length > 0) return connect(...args);
    return (connect() as Promise<pg.PoolClient>).catch((error: unknown) => {
      if (isPoolTimeout(error)) throw new DatabaseBusyError();
      throw isConnectionLost(error) ? new DatabaseUnavailableError(error) : error;
    });
  }) as typeof pool.connect;
  const tracking: StampTracking = {
    value: undefined,
    readAt: -Infinity,
    askedAt: -Infinity,
    ownWrites: 0,
    polling: undefined,
    timer: undefined,
    pool,
  };
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool }) });
  stampTracking.set(db, tracking);
  return db;
}

/** Reads the stamp row once (one poll at a time); failures leave the last value to age out. */
function pollStamp(tracking: StampTracking): Promise<void> {
  tracking.polling ??= tracking.pool
    .query<{ value: number }>('select value from change_stamp where id = 1')
    .then(
      (result) => {
        tracking.value = Number(result.rows[0]?.value);
        tracking.readAt = performance.now();
      },
      () => {},
    )
    .finally(() => {
      tracking.polling = undefined;
    });
  return tracking.polling;
}

/**
 * The stamp tracking of `db` when its value may be used (read within STAMP_TRUST_MS), else
 * undefined; either way asking keeps the polling going.
 */
function trustedStamp(db: object): (StampTracking & { value: number }) | undefined {
  const tracking = stampTracking.get(db);
  if (!tracking) return undefined;
  const now = performance.now();
  tracking.askedAt = now;
  startPolling(tracking);
  if (tracking.value === undefined || now - tracking.readAt > STAMP_TRUST_MS) {
    void pollStamp(tracking);
    return undefined;
  }
  return tracking as StampTracking & { value: number };
}

function startPolling(tracking: StampTracking): void {
  if (tracking.timer) return;
  tracking.timer = setInterval(() => {
    if (tracking.pool.ending || performance.now() - tracking.askedAt > STAMP_IDLE_MS) {
      clearInterval(tracking.timer);
      tracking.timer = undefined;
      return;
    }
    void pollStamp(tracking);
  }, STAMP_POLL_MS);
  tracking.timer.unref();
}

/** The NOTIFY channel of announceOutbox. */
const OUTBOX_CHANNEL = 'pal_outbox';
/** How long a lost LISTEN connection waits before it connects again. */
const LISTEN_RECONNECT_MS = 1000;

/**
 * LISTEN on a connection of its own (outside the pool, which it would otherwise hold for good),
 * made again whenever it is lost; `listener` runs on every notification and after each
 * (re)connection, since notifications sent while it was away are lost.
 */
async function listenOn(
  pool: pg.Pool,
  channel: string,
  listener: () => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: pool.options.connectionString,
      connectionTimeoutMillis: 5000,
    });
    next.on('notification', () => listener());
    next.on('error', () => {}); // 'end' follows, which reconnects
    next.on('end', () => {
      if (stopped || client !== next) return;
      client = undefined;
      retry = setTimeout(() => void connect().catch(() => {}), LISTEN_RECONNECT_MS);
      retry.unref();
    });
    client = next;
    try {
      await next.connect();
      await next.query(`listen ${channel}`);
    } catch (error) {
      client = undefined;
      await next.end().catch(() => {});
      if (!stopped) {
        retry = setTimeout(() => void connect().catch(() => {}), LISTEN_RECONNECT_MS);
        retry.unref();
      }
      throw error;
    }
    listener();
  };
  await connect().catch(() => {}); // polling covers the time without a connection
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}

/** One GIN trigram index per column (`column → index name`), which LIKE '%needle%' uses. */
async function createTrigramIndexes(
  db: Kysely<any>,
  table: string,
  indexes: Readonly<Record<string, string>>,
): Promise<void> {
  // pg_trgm is a trusted extension (PostgreSQL 13+): the database's owner may create it.
  await sql`create extension if not exists pg_trgm`.execute(db);
  for (const [column, index] of Object.entries(indexes)) {
    await sql`create index ${sql.raw(index)} on ${sql.table(table)} using gin (${sql.raw(column)} gin_trgm_ops)`.execute(
      db,
    );
  }
}

async function dropIndexes(db: Kysely<any>, indexes: readonly string[]): Promise<void> {
  for (const index of indexes) await sql`drop index if exists ${sql.raw(index)}`.execute(db);
}

export const postgresDialect: StorageDialect = {
  name: 'postgres',
  binaryType: 'bytea',

  serialPrimaryKey(table, column) {
    return table.addColumn(column, 'bigserial', (col) => col.primaryKey().notNull());
  },

  createTransactionTextIndex(db) {
    return createTrigramIndexes(db, 'transactions', TEXT_INDEXES);
  },

  dropTransactionTextIndex(db) {
    return dropIndexes(db, Object.values(TEXT_INDEXES));
  },

  // A GIN index takes its new entries into a pending list already (fastupdate).
  async deferTransactionTextIndex() {},

  async undeferTransactionTextIndex() {},

  whereTransactionTextsContain(query, filters) {
    // LIKE '%needle%' on a folded column is what the trigram index serves; the planner chooses
    // between it (few matches) and walking the creation-order index until a page is full (many).
    let narrowed = query;
    for (const f of filters) {
      narrowed = narrowed.where(likeContains(`transactions.${f.column}`, f.foldedNeedle));
    }
    return {
      query: narrowed,
      creationOrder: sql.ref<number>('transactions.seq') as Expression<number>,
    };
  },

  createPalTextIndex(db) {
    return createTrigramIndexes(db, 'pals', PAL_TEXT_INDEXES);
  },

  async createRateCountTable(db) {
    // Unlogged: counts of the last minute are not worth a WAL write each; a crash or a failover
    // starts them afresh. The columns are rate-limiter-flexible's (RateLimiterPostgres).
    await sql`create unlogged table ${sql.table(RATE_COUNT_TABLE)} (
      key varchar(255) primary key,
      points integer not null default 0,
      expire bigint
    )`.execute(db);
  },

  async dropRateCountTable(db) {
    await sql`drop table if exists ${sql.table(RATE_COUNT_TABLE)}`.execute(db);
  },

  dropPalTextIndex(db) {
    return dropIndexes(db, Object.values(PAL_TEXT_INDEXES));
  },

  wherePalTextsMatch(query, filters, matchAny) {
    // The trigram indexes serve LIKE '%needle%' on the folded columns as they are (and OR of them
    // through a BitmapOr); the planner chooses them or the enterprise's primary-key prefix.
    return wherePalTextsLike(query, filters, matchAny);
  },

  async createChangeStampTriggers(db, tables) {
    await sql`create function pal_bump_change_stamp() returns trigger language plpgsql as $$
      begin
        update change_stamp set value = value + 1 where id = 1;
        return null;
      end $$`.execute(db);
    for (const table of tables) {
      await sql`create trigger ${sql.raw(`${table}_change_stamp`)}
        after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function pal_bump_change_stamp()`.execute(db);
    }
  },

  async dropChangeStampTriggers(db, tables) {
    for (const table of tables) {
      await sql`drop trigger if exists ${sql.raw(`${table}_change_stamp`)} on ${sql.table(table)}`.execute(
        db,
      );
    }
    await sql`drop function if exists pal_bump_change_stamp()`.execute(db);
  },

  changeStampBoundMs: POSTGRES_CHANGE_BOUND_MS,

  runExclusively(db, name, work) {
    // The lock belongs to one connection, held for the whole of `work` (which uses others). One
    // such holder at a time on a node: two sweeps each holding a connection and each waiting for
    // another would empty a small pool and wait for each other until the pool's timeout.
    const adapter = db.getExecutor().adapter;
    const previous = exclusiveRuns.get(adapter) ?? Promise.resolve();
    const run = previous.then(() => lockedRun(db, name, work));
    exclusiveRuns.set(
      adapter,
      run.then(
        () => undefined,
        () => undefined,
      ),
    );
    return run;
  },

  forUpdate(query, options) {
    const locked = query.forUpdate(options?.of);
    if (options?.skipLocked) return locked.skipLocked() as typeof query;
    return (options?.noWait ? locked.noWait() : locked) as typeof query;
  },

  async announceOutbox(db) {
    // Delivered at commit, to every session that listens (each node's dispatcher).
    await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(db);
  },

  async listenOutbox(db, listener) {
    const tracking = stampTracking.get(db);
    if (!tracking) throw new Error('listenOutbox needs a handle made by openPostgres');
    return listenOn(tracking.pool, OUTBOX_CHANNEL, listener);
  },

  async refreshChangeStamp(db) {
    const tracking = stampTracking.get(db);
    if (!tracking) return;
    tracking.askedAt = performance.now();
    await pollStamp(tracking);
    startPolling(tracking);
  },

  changeStamp(db) {
    const tracking = trustedStamp(db);
    return tracking ? `${tracking.value}:${tracking.ownWrites}` : undefined;
  },

  sharedChangeStamp(db) {
    // The row alone: it moves with every node's writes to the cached tables (this node's too,
    // once polled), and not with this node's other writes.
    const tracking = trustedStamp(db);
    return tracking ? String(tracking.value) : undefined;
  },

  countUpTo(db, query, cap, textSearch) {
    if (!textSearch) return cappedCount(db, query, cap);
    // With LIMIT cap + 1 the planner may bet on finding the matches early in a scan of the table
    // or of the creation-order index, which costs 40 ms and more when they are rare or late
    // (measured over a million rows); the trigram index's bitmap costs what the matches cost, so
    // the other plans are turned off for this one statement. Two round trips before the answer
    // (the settings go with BEGIN as one simple query), and the COMMIT after it: a read-only
    // transaction's end changes nothing the answer depends on. Each round trip on a busy machine
    // is a chance to wait for a core (the four this took before showed in T2's slowest requests).
    return new Promise<CappedCount>((resolve, reject) => {
      db.connection()
        .execute(async (connection) => {
          await sql`begin; set local enable_seqscan = off; set local enable_indexscan = off`.execute(
            connection,
          );
          let counted: CappedCount;
          try {
            counted = await cappedCount(connection, query, cap);
          } catch (error) {
            reject(error);
            await sql`rollback`.execute(connection);
            return;
          }
          resolve(counted);
          await sql`commit`.execute(connection);
        })
        .catch(reject);
    });
  },

  isUniqueViolation(error) {
    return (error as { code?: unknown } | null)?.code === '23505';
  },

  isLockNotAvailable(error) {
    return (error as { code?: unknown } | null)?.code === '55P03';
  },
};
