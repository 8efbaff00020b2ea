// Every migration's name, in the order a fresh database applies them: written out (not read from
// src/storage/migrations) so that the tests notice a migration added, dropped or renamed.
export const MIGRATION_NAMES = [
  '0001_initial',
  '0002_workflow_variables',
  '0003_browser_sessions',
  '0004_change_stamp',
  '0005_sign_in_failures',
  '0006_pal_text_index',
  '0007_pal_documents',
  '0008_session_standing',
  '0009_client_secret_rotation',
  '0010_rate_limits',
  '0011_workflow_mail_counts',
  '0012_outbox',
  '0020_audit_log',
  '0021_idempotency_keys',
  '0022_document_state',
  '0023_transaction_uploads',
  '0024_completed_documents',
  '0025_deferred_text_index',
  '0026_text_statistics',
  '0027_spent_tokens_index',
];
