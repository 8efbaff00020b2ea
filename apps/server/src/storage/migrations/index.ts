// The migrations, listed in code rather than found by scanning a folder, so they run the same
// from src (tsx, vitest) and from dist. Kysely applies them in the order of their names.
import type { Migration } from 'kysely';
import { initial } from './0001-initial.js';
import { workflowVariables } from './0002-workflow-variables.js';
import { browserSessions } from './0003-browser-sessions.js';
import { changeStamp } from './0004-change-stamp.js';
import { signInFailures } from './0005-sign-in-failures.js';
import { palTextIndex } from './0006-pal-text-index.js';
import { palDocuments } from './0007-pal-documents.js';
import { sessionStanding } from './0008-session-standing.js';
import { clientSecretRotation } from './0009-client-secret-rotation.js';
import { rateLimits } from './0010-rate-limits.js';
import { workflowMailCounts } from './0011-workflow-mail-counts.js';
import { outbox } from './0012-outbox.js';
import { auditLog } from './0020-audit-log.js';
import { idempotencyKeys } from './0021-idempotency-keys.js';
import { documentState } from './0022-document-state.js';
import { transactionUploads } from './0023-transaction-uploads.js';
import { completedDocuments } from './0024-completed-documents.js';
import { deferredTextIndex } from './0025-deferred-text-index.js';
import { textStatistics } from './0026-text-statistics.js';
import { spentTokensIndex } from './0027-spent-tokens-index.js';
import { outboxLanes } from './0028-outbox-lanes.js';
import { sessionDraftFiles } from './0029-session-draft-files.js';
import { mailLinkSessions } from './0030-mail-link-sessions.js';
import { consoleGrantLookups } from './0031-console-grant-lookups.js';
import { transactionTokenLookups } from './0032-transaction-token-lookups.js';
import { emailKeysPerMailbox } from './0033-email-keys-per-mailbox.js';

export const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_workflow_variables': workflowVariables,
  '0003_browser_sessions': browserSessions,
  '0004_change_stamp': changeStamp,
  '0005_sign_in_failures': signInFailures,
  '0006_pal_text_index': palTextIndex,
  '0007_pal_documents': palDocuments,
  '0008_session_standing': sessionStanding,
  '0009_client_secret_rotation': clientSecretRotation,
  '0010_rate_limits': rateLimits,
  '0011_workflow_mail_counts': workflowMailCounts,
  '0012_outbox': outbox,
  '0020_audit_log': auditLog,
  '0021_idempotency_keys': idempotencyKeys,
  // Added after 0020 and 0021 were released: a database has them, and Kysely applies in name order.
  '0022_document_state': documentState,
  '0023_transaction_uploads': transactionUploads,
  '0024_completed_documents': completedDocuments,
  '0025_deferred_text_index': deferredTextIndex,
  '0026_text_statistics': textStatistics,
  '0027_spent_tokens_index': spentTokensIndex,
  '0028_outbox_lanes': outboxLanes,
  '0029_session_draft_files': sessionDraftFiles,
  '0030_mail_link_sessions': mailLinkSessions,
  '0031_console_grant_lookups': consoleGrantLookups,
  '0032_transaction_token_lookups': transactionTokenLookups,
  '0033_email_keys_per_mailbox': emailKeysPerMailbox,
};
