// The session_draft_files table: files of a session form that did not go through (domain/sessions.ts).
import type { Db } from './database.js';
import type { SessionDraftFilesTable } from './schema.js';

export type SessionDraftFileRow = Omit<SessionDraftFilesTable, 'session_id_hash'>;

export function readSessionDraftFiles(db: Db, idHash: string): Promise<SessionDraftFileRow[]> {
  return db
    .selectFrom('session_draft_files')
    .select(['name', 'filename', 'content'])
    .where('session_id_hash', '=', idHash)
    .execute();
}

/** The session's draft files become `files` (none: the session keeps none). */
export async function replaceSessionDraftFiles(
  db: Db,
  idHash: string,
  files: readonly SessionDraftFileRow[],
): Promise<void> {
  await db.deleteFrom('session_draft_files').where('session_id_hash', '=', idHash).execute();
  if (files.length > 0)
    await db
      .insertInto('session_draft_files')
      .values(files.map((f) => ({ session_id_hash: idHash, ...f })))
      .execute();
}
