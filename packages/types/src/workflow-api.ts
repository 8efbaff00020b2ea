// The host API a pal's workflow modules see (docs/workflows.md): the `pal` argument of every export
// and the input each operation passes. Hand-written, types only: the service implements them in its
// sandbox. A module in plain JavaScript gets completion through JSDoc:
//
//   /** @param {import('@pal-workflow/types').TransactionInput} input
//    *  @param {import('@pal-workflow/types').Pal} pal */
//   export function runWorkflow(input, pal) { pal.vars.set('seen', 'yes'); }
import type {
  ConsoleContent,
  ConsoleResult,
  Document,
  NameValue,
  ServiceRequest,
  ServiceResponse,
  TransactionContent,
  TransactionResult,
} from './generated/types.gen.js';

/** String variables kept with the transaction, or with the pal in the enterprise; written when the run succeeds. */
export interface PalVars {
  get(name: string): string | undefined;
  /** Numbers and booleans are converted to strings; names up to 200, values up to 65,536 characters. */
  set(name: string, value: string | number | boolean): void;
  all(): Record<string, string>;
}

/** The transaction of a transaction run. Moves throw on an illegal transition. */
export interface PalTransaction {
  readonly id: string;
  readonly palId: string;
  /** The free-text business status (NEW at first). */
  readonly status: string;
  /** OPEN, COMPLETED, CANCELLED, EXPIRED or ARCHIVED. */
  readonly systemStatus: string;
  /** RUNNING during T6/T9 runs. */
  readonly webServiceStatus: string;
  /** 1 to 64 characters. */
  setStatus(status: string): void;
  /** OPEN → COMPLETED. */
  complete(): void;
  /** OPEN → CANCELLED. */
  cancel(): void;
}

export interface PalRole {
  sso: string;
  role: string;
}

/** Roles on the transaction (transaction runs only). */
export interface PalRoles {
  assign(sso: string, role: string): void;
  /** Removes every role of the SSO on the transaction. */
  remove(sso: string): void;
  list(): PalRole[];
}

export interface PalMail {
  /** Mails an SSO of the enterprise a link that enters this transaction and runs `action` (transaction runs only). */
  send(message: { to: string; subject: string; text: string; action: string }): void;
}

/**
 * The transaction's documents (transaction runs only): the pal's PDF and image files with the
 * values and signatures people gave them (web mode).
 */
export interface PalDocuments {
  /**
   * The documents in the Document JSON form, without `content`: each field with its current
   * `value`, each signature given so far with its `recordTime` (0: not signed). In a run started
   * by a session page's form, the form's values and signatures are already laid over them.
   */
  list(): Document[];
  /**
   * Sets a field's value, kept with the run's other effects. `file` is the document's `filename`
   * (its path in the pal folder). An unknown file or field, or a value a CHECKBOX or a choice
   * field cannot hold, throws a TypeError; so does a transaction that is not OPEN.
   */
  setField(file: string, fieldId: string, value: string | number | boolean): void;
  /**
   * Takes back the signature `signatureId` of the document `file`, kept with the run's other
   * effects, so that its person gives it again (a returned claim is signed anew). An unknown file
   * or signature, or a transaction that is not OPEN, throws a TypeError; a signature not given
   * yet stays so.
   */
  clearSignature(file: string, signatureId: string): void;
  /** The files uploaded on the session pages (the manifest's `uploads`), described. */
  uploads(): UploadInfo[];
  /**
   * The completed PDF of the document `file`, base64, once the transaction is COMPLETED and the
   * PDF is written (shortly after the commit that completed it); null before. Hand it to an API
   * client in the run's result.
   */
  completed(file: string): string | null;
}

/** A file a person uploaded on a session page; its content stays with the service. */
export interface UploadInfo {
  /** The manifest's upload name. */
  name: string;
  /** The file's name as the browser gave it (no folders). */
  filename: string;
  /** What its bytes are: application/pdf, image/png or image/jpeg. */
  contentType: string;
  size: number;
  /** SHA-256 of the content, base64. */
  digest: string;
  sso: string | null;
  /** ISO-8601. */
  uploadedAt: string;
}

/** A signature given on a session page, as `input.signatures` carries it. */
export interface GivenSignature {
  /** The Signature's `id`. */
  id: string;
  /** The document's `filename`. */
  file: string;
  role: string;
  /** The signer; absent for an anonymous session. */
  sso: string | null;
  kind: 'DRAWN' | 'TYPED';
  /** DRAWN: the PNG, base64. */
  image?: string;
  /** TYPED: the name as typed. */
  text?: string;
  /** Unix seconds. */
  recordTime: number;
}

/** The second argument of every workflow export. */
export interface Pal {
  /** To the service log, with the request id. */
  log(...values: unknown[]): void;
  readonly vars: PalVars;
  /** Present in transaction runs only. */
  readonly transaction?: PalTransaction;
  readonly roles: PalRoles;
  readonly mail: PalMail;
  /** Present in transaction runs only. */
  readonly documents?: PalDocuments;
  /** Another module of the same pal, inside the same run. */
  call(module: string, exportName: string, input: unknown): Promise<unknown>;
}

/** What every run's input adds to the request body. */
export interface RunInputBase {
  /** postData as an object; the last value of a repeated name wins. */
  values: Record<string, string>;
  /** The export being run (or U1's action, or an entry's action). */
  action: string;
  /** The SSO of an entry or mail link. */
  sso?: string;
  /**
   * The person of that SSO, in runs a browser session starts (an entry, a mail link, a session
   * page's form), so a workflow can fill in what the service knows instead of asking for it.
   * Absent for a guest of a P3 entry (`userSSO=auto`), of whom nothing is known.
   */
  person?: Person;
}

/** A person as the enterprise knows them: the account of an SSO. */
export interface Person {
  firstName: string;
  lastName: string;
  email: string;
}

/** Input of the `console` module (C2, C7, C6 entries). */
export interface ConsoleInput extends ConsoleContent, RunInputBase {
  palId: string;
}

/** Input of `console.executeWorkflow` (C5): the caller's document as text. */
export interface ExecuteWorkflowInput {
  body: string;
  contentType: string;
}

/** Input of the `transaction` module (T6, T9, entries, mail links, session forms). */
export interface TransactionInput extends TransactionContent, RunInputBase {
  transactionId: string;
  /**
   * A session page's form: the signatures it gave (its `values` are the fields the person may
   * edit, as submitted; an unchecked checkbox "false"). Absent in other runs.
   */
  signatures?: GivenSignature[];
  /** A session page's form: the files it uploaded, described. */
  uploads?: UploadInfo[];
}

/** Input of the `user` module (U1); `values` is `payload.data`. */
export interface UserInput extends Partial<ServiceRequest>, RunInputBase {
  palId: string;
}

/** What an export may return; left-out members take the service's defaults. */
export type ConsoleReturn = Partial<ConsoleResult> | void;
export type TransactionReturn = Partial<TransactionResult> | void;
export type NameValueReturn = NameValue[] | Record<string, string> | void;
export type UserReturn = Partial<ServiceResponse> | void;
