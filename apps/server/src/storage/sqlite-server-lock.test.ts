import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers.js';
import { DatabaseError } from './database.js';
import { lockSqliteServer } from './sqlite-server-lock.js';

describe('the SQLite server lock', () => {
  it('is taken once per database file, makes its folder, and is free again once released', () => {
    const dir = tempDir();
    try {
      // The folder is not made yet: a fresh DATA_DIR with PAL_SECRET_KEY set.
      const database = join(dir.path, 'fresh', 'pal.sqlite');
      const lock = lockSqliteServer(database);
      expect(existsSync(`${database}.server-lock`)).toBe(true);
      expect(() => lockSqliteServer(database)).toThrow(DatabaseError);
      expect(() => lockSqliteServer(database)).toThrow(
        `another server is already serving the database ${database}: stop it first`,
      );
      lock.release();
      lockSqliteServer(database).release();
    } finally {
      dir.remove();
    }
  });

  it('takes none for an in-memory database, and writes nothing', () => {
    const before = readdirSync(process.cwd());
    lockSqliteServer(':memory:').release();
    lockSqliteServer(':memory:').release();
    expect(readdirSync(process.cwd())).toEqual(before);
  });
});
