// The typed shape of the database, as the migrations in ./migrations create it. Kysely checks
// every query against these interfaces.
//
// Portable conventions (SQLite today, PostgreSQL later):
// - dates are ISO-8601 UTC strings (`2025-01-31T12:00:00.000Z`): they sort as text and read back
//   unchanged on both databases;
// - booleans are integers 0/1 (`Flag`), converted at the edge of each repository;
// - a `*_key` column holds the case-folded copy of a searchable string (String#toLowerCase in
//   JavaScript, so both databases fold alike), which "contains" searches compare against.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** 0 or 1. */
export type Flag = number;
/** ISO-8601 UTC. */
export type IsoDate = string;

export interface EnterprisesTable {
  id: string;
  name: string;
  /** Lower-case name; unique, so "Demo" and "demo" are one enterprise. */
  name_key: string;
  created_at: IsoDate;
}

export interface ApiClientsTable {
  id: string;
  enterprise_id: string;
  /** BASIC user name; unique across the service. */
  username: string;
  /** base64url HMAC-SHA-256 of the secret under the server pepper. */
  secret_hash: string;
  created_at: IsoDate;
  /** Migration 0008: the secret the last rotation replaced, as secret_hash; null: none. */
  previous_secret_hash: string | null;
  /** Migration 0008: when the previous secret stops working. */
  previous_secret_expires_at: IsoDate | null;
}

export interface PalsTable {
  enterprise_id: string;
  id: string;
  /** 1 on the first deployment, +1 on every redeployment. */
  version: number;
  name: string | null;
  name_key: string | null;
  description: string | null;
  description_key: string | null;
  category: string | null;
  category_key: string | null;
  publisher: string | null;
  publisher_key: string | null;
  branch_name: string | null;
  mode_transaction: Flag;
  mode_console: Flag;
  mode_web: Flag;
  shadow: Flag;
  shell: Flag;
  test: Flag;
  installed: Flag;
  deployed: Flag;
  /** The validated pal.json of the current version, as JSON. */
  manifest: string;
  /** SHA-256 of manifest and files, so an unchanged package need not become a new version. */
  content_hash: string;
  create_date: IsoDate;
  last_modified_date: IsoDate;
}

/** Every deployed version of a pal, with its workflow sources, so a transaction can keep its version. */
export interface PalVersionsTable {
  enterprise_id: string;
  pal_id: string;
  version: number;
  manifest: string;
  /** JSON object: file path inside the pal folder → UTF-8 text. */
  files: string;
  content_hash: string;
  deployed_at: IsoDate;
}

export interface AccountsTable {
  id: string;
  email: string;
  /** Lower-case e-mail; unique: one account per address, across all enterprises. */
  email_key: string;
  first_name: string;
  last_name: string;
  created_at: IsoDate;
  updated_at: IsoDate;
}

export type SsoStatus = 'ACTIVE' | 'PENDING_ACTIVATION' | 'DELETED';

export interface SsosTable {
  /** Opaque, 128 random bits, base64url. */
  id: string;
  enterprise_id: string;
  account_id: string;
  status: SsoStatus;
  created_at: IsoDate;
  updated_at: IsoDate;
}

export interface InvitationsTable {
  id: string;
  /** base64url SHA-256 of the token; the token itself is only in the mail. */
  token_hash: string;
  enterprise_id: string;
  sso_id: string;
  email: string;
  created_at: IsoDate;
  expires_at: IsoDate;
  used_at: IsoDate | null;
}

export type ConsoleProfile = 'enterprise' | 'personal';

export interface ConsoleGrantsTable {
  enterprise_id: string;
  pal_id: string;
  sso_id: string;
  profile: ConsoleProfile;
  created_at: IsoDate;
}

export interface TransactionsTable {
  /** Surrogate integer key: insertion order, and the rowid the SQLite text index refers to. */
  seq: Generated<number>;
  /** Opaque, 128 random bits, base64url; unique across the service. */
  id: string;
  enterprise_id: string;
  pal_id: string;
  pal_version: number;
  name: string | null;
  name_key: string | null;
  description: string | null;
  description_key: string | null;
  category: string | null;
  category_key: string | null;
  status: string;
  system_status: string;
  web_service_status: string;
  test: Flag;
  create_date: IsoDate;
  modified_date: IsoDate;
  execute_end_date: IsoDate | null;
  access_end_date: IsoDate | null;
  archive_end_date: IsoDate | null;
}

export interface TransactionRolesTable {
  transaction_id: string;
  sso_id: string;
  role: string;
  enterprise_id: string;
  created_at: IsoDate;
}

/** Single-use entry tokens (C6, T5, T8, P3; domain/tokens.ts): stored only as a hash. */
export interface TokensTable {
  token_hash: string;
  kind: string;
  enterprise_id: string;
  pal_id: string | null;
  transaction_id: string | null;
  sso_id: string | null;
  action: string | null;
  /** JSON, free for the token kind. */
  data: string | null;
  created_at: IsoDate;
  expires_at: IsoDate;
  used_at: IsoDate | null;
}

/** How a browser session began (domain/sessions.ts SessionKind). */
export type SessionKind = 'console' | 'participant' | 'anonymous' | 'owner' | 'mail';

/** A browser session made by an entry (docs/entry.md). */
export interface BrowserSessionsTable {
  /** base64url SHA-256 of the cookie's value. */
  id_hash: string;
  enterprise_id: string;
  pal_id: string;
  /** Absent for console sessions. */
  transaction_id: string | null;
  /**
   * The SSO whose standing the session rests on: the person, or for an anonymous session (T8) the
   * SSO its token was issued for, which the page never shows. (Absent only in rows of before
   * migration 0007, which removed them.)
   */
  sso_id: string | null;
  role: string | null;
  /** Migration 0007: how the session began. */
  kind: SessionKind;
  /** Migration 0007: console sessions, the profile of the console grant they rest on. */
  profile: ConsoleProfile | null;
  /** The CSRF token of the session page's forms. */
  csrf: string;
  /** JSON of the last action's outcome, shown on the session page. */
  outcome: string | null;
  created_at: IsoDate;
  last_seen_at: IsoDate;
}

/** A scope of workflow variables: `transaction:ID` or `pal:ENTERPRISE:PAL`. */
export interface VariableScopesTable {
  scope: string;
  enterprise_id: string;
  /** +1 on every run that writes variables of the scope. */
  version: number;
}

export interface VariablesTable {
  scope: string;
  name: string;
  value: string;
}

/**
 * SQLite only: the FTS5 index over transactions.name_key (storage/sqlite.ts). Typed here so the
 * SQLite dialect can join it; nothing outside that module refers to it.
 */
/** The FTS5 trigram indexes over one case-folded text column of transactions each. */
export interface TransactionsNameFtsTable {
  rowid: number;
  name_key: string | null;
}
export interface TransactionsDescriptionFtsTable {
  rowid: number;
  description_key: string | null;
}
export interface TransactionsCategoryFtsTable {
  rowid: number;
  category_key: string | null;
}

/** One row (id 1) whose value moves with every write to a cached table (migration 0004). */
export interface ChangeStampTable {
  id: number;
  value: number;
}

/** Failed sign-ins of one (username, address) in the window that began at window_start. */
export interface SignInFailuresTable {
  /** The username as given, or `~` and its SHA-256 when it cannot be a client's (see the domain). */
  username: string;
  address: string;
  window_start: IsoDate;
  failures: number;
}

/**
 * A document of a pal version (docs/pal-format.md): its place in the manifest's list and what the
 * service read of it at deploy. The bytes are in document_contents, by digest.
 */
export interface PalDocumentsTable {
  enterprise_id: string;
  pal_id: string;
  version: number;
  /** 0-based place in the manifest's `documents`. */
  position: number;
  /** The path in the pal folder, as the manifest names it. */
  file: string;
  /** SHA-256 of the file, base64. */
  digest: string;
  /** JSON: the PalDocument model (domain/pal-documents.ts): fields, signatures, pages, …. */
  document: string;
}

/**
 * Files kept by their SHA-256 within an enterprise, stored once however many versions (or, later,
 * transactions) hold them. Never shared across enterprises.
 */
export interface DocumentContentsTable {
  enterprise_id: string;
  /** SHA-256 of `content`, base64. */
  digest: string;
  size: number;
  content: Uint8Array;
  created_at: IsoDate;
}

/** A field value a person or a workflow gave a transaction's document (migration 0022). */
export interface TransactionFieldValuesTable {
  transaction_id: string;
  /** The document's file in the pal folder. */
  file: string;
  field_id: string;
  enterprise_id: string;
  value: string;
  updated_at: IsoDate;
}

/** A signature given on a transaction's document, with its evidence (migration 0022). */
export interface TransactionSignaturesTable {
  transaction_id: string;
  file: string;
  signature_id: string;
  enterprise_id: string;
  role: string;
  sso_id: string | null;
  kind: 'DRAWN' | 'TYPED';
  /** DRAWN: the PNG's bytes. */
  image: Uint8Array | null;
  /** TYPED: the name as typed. */
  text: string | null;
  /** Unix seconds. */
  record_time: number;
  signer_name: string | null;
  signer_email: string | null;
  ip_address: string;
  user_agent: string;
}

/** A transaction's completed PDF of one document (migration 0024). */
export interface TransactionCompletedDocumentsTable {
  transaction_id: string;
  file: string;
  enterprise_id: string;
  /** SHA-256 of content, base64. */
  digest: string;
  content: Uint8Array;
  created_at: IsoDate;
}

/** A file of a session form that did not go through, sent again with its next submission. */
export interface SessionDraftFilesTable {
  session_id_hash: string;
  /** The manifest's upload name. */
  name: string;
  /** The file's name as the browser gave it, cleaned. */
  filename: string;
  content: Uint8Array;
  /** When the form that chose it failed: an upload of the transaction since is newer. */
  saved_at: IsoDate;
}

/** A file uploaded on a transaction's session page (migration 0023); the latest of each name. */
export interface TransactionUploadsTable {
  transaction_id: string;
  /** The manifest's upload name. */
  name: string;
  enterprise_id: string;
  /** The file's name as the browser gave it, cleaned. */
  filename: string;
  /** What its bytes are (checked), not what the browser said. */
  content_type: string;
  size: number;
  /** SHA-256 of the content, base64. */
  digest: string;
  content: Uint8Array;
  sso_id: string | null;
  uploaded_at: IsoDate;
}

/** The workflow mails an enterprise sent in the clock hour that began at hour_start. */
export interface WorkflowMailCountsTable {
  enterprise_id: string;
  hour_start: IsoDate;
  sent: number;
}

/** `completion`: the job that writes a COMPLETED transaction's completed PDFs. */
export type OutboxKind = 'mail' | 'webhook' | 'completion';
export type OutboxStatus = 'pending' | 'delivered' | 'failed';

/** An outgoing message (migration 0012; storage/outbox-messages.ts). */
export interface OutboxMessagesTable {
  /** `msg_` and 128 random bits: a webhook's `webhook-id`, the same on every attempt. */
  id: string;
  kind: OutboxKind;
  enterprise_id: string | null;
  /** A webhook delivery's endpoint. */
  endpoint_id: string | null;
  event_type: string | null;
  /** A webhook's body as sent; a mail sealed (domain/sealing.ts), emptied once delivered. */
  payload: string;
  status: OutboxStatus;
  /** Attempts begun (a node killed while sending counts one). */
  attempts: number;
  /** When a pending message is due; while a node holds it, the end of its lease. */
  next_attempt_at: IsoDate;
  /** Random per claim: only the node that holds the message may record its outcome. */
  claim: string | null;
  last_error: string | null;
  /** Start of the retry window: creation, or the last redelivery. */
  retries_since: IsoDate;
  created_at: IsoDate;
  finished_at: IsoDate | null;
}

/** An enterprise's webhook endpoint (migration 0012; storage/webhook-endpoints.ts). */
export interface WebhookEndpointsTable {
  /** `ep_` and 128 random bits. */
  id: string;
  enterprise_id: string;
  url: string;
  /** `*`, or the event types it receives, space-separated. */
  events: string;
  /** The `whsec_…` secret, sealed under the server key. */
  secret: string;
  /** The secret before the last rotation, sealed; it signs too until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: IsoDate | null;
  created_at: IsoDate;
}

/** One security-relevant act (migration 0020; domain/audit.ts). Append-only. */
export interface AuditLogTable {
  id: Generated<number>;
  at: IsoDate;
  enterprise_id: string;
  /** A stable code, e.g. `token.issued` (domain/audit.ts lists them). */
  action: string;
  outcome: 'success' | 'failure';
  /** `client`, `sso`, `operator`, `system` or `anonymous`. */
  actor_type: string;
  /** The client's username, the SSO id, the operator's login; null when unknown. */
  actor: string | null;
  target_type: string | null;
  target: string | null;
  ip: string | null;
  request_id: string | null;
  /** JSON object of strings, numbers and booleans; never a secret. */
  details: string | null;
}

/** An Idempotency-Key of one API client and the first answer to it (migration 0021). */
export interface IdempotencyKeysTable {
  client_id: string;
  idempotency_key: string;
  /** SHA-256 of what makes the request the same request (http/idempotency.ts). */
  fingerprint: string;
  /** Random id of the request serving the key; the one that may store its answer. */
  owner: string;
  /** While no answer is stored: after this, another request may take the key over. */
  locked_until: IsoDate;
  /** The answer, once stored; null while the first request is being served. */
  status: number | null;
  content_type: string | null;
  body: string | null;
  created_at: IsoDate;
  expires_at: IsoDate;
}

export interface DatabaseSchema {
  enterprises: EnterprisesTable;
  api_clients: ApiClientsTable;
  pals: PalsTable;
  pal_versions: PalVersionsTable;
  pal_documents: PalDocumentsTable;
  document_contents: DocumentContentsTable;
  accounts: AccountsTable;
  ssos: SsosTable;
  invitations: InvitationsTable;
  console_grants: ConsoleGrantsTable;
  transactions: TransactionsTable;
  transaction_roles: TransactionRolesTable;
  tokens: TokensTable;
  variable_scopes: VariableScopesTable;
  browser_sessions: BrowserSessionsTable;
  variables: VariablesTable;
  change_stamp: ChangeStampTable;
  sign_in_failures: SignInFailuresTable;
  workflow_mail_counts: WorkflowMailCountsTable;
  outbox_messages: OutboxMessagesTable;
  webhook_endpoints: WebhookEndpointsTable;
  audit_log: AuditLogTable;
  idempotency_keys: IdempotencyKeysTable;
  transaction_field_values: TransactionFieldValuesTable;
  transaction_signatures: TransactionSignaturesTable;
  transaction_completed_documents: TransactionCompletedDocumentsTable;
  transaction_uploads: TransactionUploadsTable;
  session_draft_files: SessionDraftFilesTable;
  transactions_name_fts: TransactionsNameFtsTable;
  transactions_description_fts: TransactionsDescriptionFtsTable;
  transactions_category_fts: TransactionsCategoryFtsTable;
}

export type PalRow = Selectable<PalsTable>;
export type NewPal = Insertable<PalsTable>;
export type TransactionRow = Selectable<TransactionsTable>;
export type NewTransaction = Insertable<TransactionsTable>;
export type TransactionUpdate = Updateable<TransactionsTable>;
export type SsoRow = Selectable<SsosTable>;
export type AccountRow = Selectable<AccountsTable>;
