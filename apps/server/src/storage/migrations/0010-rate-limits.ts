// Where several nodes share their rate-limit counts (storage/rate-counts.ts): an unlogged table
// on PostgreSQL; nothing on SQLite, whose processes count in memory.
import type { Kysely, Migration } from 'kysely';
import { dialectOf } from '../adapter-dialect.js';

export const rateLimits: Migration = {
  async up(db: Kysely<any>) {
    await dialectOf(db).createRateCountTable(db);
  },
  async down(db: Kysely<any>) {
    await dialectOf(db).dropRateCountTable(db);
  },
};
