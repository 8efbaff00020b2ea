// The session_draft_files table: files of a session form that did not go through (domain/sessions.ts).
import type { Db } from './database.js';
import type { SessionDraftFilesTable } from './schema.js';

export type SessionDraftFileRow = Omit<SessionDraftFilesTable, 'session_id_hash'>;

export function readSessionDraftFiles(db: Db, idHash: string): Promise<SessionDraftFileRow[]> {
  return db
    .selectFrom('session_draft_files')
    .select(['name', 'filename', 'content', 'saved_at'])
    .where('session_id_hash', '=', idHash)
    .execute();
}

/**
 * The session's draft files become `files` (none: the session keeps none). Those of the same
 * person's other sessions on the transaction go: a mailed link makes a session at each use, and
 * each must not hold a form's worth of files of its own.
 */
export async function replaceSessionDraftFiles(
  db: Db,
  idHash: string,
  person: { transactionId: string | null; ssoId: string | null },
  files: readonly SessionDraftFileRow[],
): Promise<void> {
  const { transactionId, ssoId } = person;
  await db
    .deleteFrom('session_draft_files')
    .where((eb) =>
      transactionId === null || ssoId === null
        ? eb('session_id_hash', '=', idHash)
        : eb.or([
            eb('session_id_hash', '=', idHash),
            eb(
              'session_id_hash',
              'in',
              eb
                .selectFrom('browser_sessions')
                .select('id_hash')
                .where('transaction_id', '=', transactionId)
                .where('sso_id', '=', ssoId),
            ),
          ]),
    )
    .execute();
  if (files.length > 0)
    await db
      .insertInto('session_draft_files')
      .values(files.map((f) => ({ session_id_hash: idHash, ...f })))
      .execute();
}
