// What a transaction's documents hold beyond the pal version's (docs/web-mode.md): the values its
// people gave to fields and the signatures they made. The pal version's documents
// (domain/pal-documents.ts) are what every transaction starts from; these are kept with the
// transaction, written only by a run that succeeded, and read by the session page, the host API
// (`pal.documents.list()`) and the completed PDF.
import type * as Wire from '@pal-workflow/types';

/** How a signature was made: drawn with a mouse, finger or pen, or typed as a name. */
export type SignatureKind = Wire.GivenSignature['kind'];

/** A signature given on a page, as a workflow's `input.signatures` carries it (the published type). */
export type GivenSignature = Wire.GivenSignature;

/** What the evidence page says of a signer, captured when the signature was given. */
export interface SignatureEvidence {
  name: string | null;
  email: string | null;
  ipAddress: string;
  userAgent: string;
}

/** A signature as kept with the transaction. */
export interface StoredSignature extends GivenSignature {
  evidence: SignatureEvidence;
}

/** One document of a transaction: its fields' current values and the signatures given so far. */
export interface TransactionDocumentState {
  file: string;
  /** Field id → current value (the manifest's first value until someone sets it). */
  values: Record<string, string>;
  signatures: StoredSignature[];
}
