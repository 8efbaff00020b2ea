// Everything the session page shows (docs/web-mode.md), without HTML: the pal or transaction, the
// person, the documents with each field's value and whether the person may edit it now, the
// signatures and which are theirs, the actions offered to them now, the last outcome and the
// draft of a form that did not go through. The page (http/session-page.ts) renders it; the posted
// form (http/session-form.ts) is checked against the same rules (./web-permissions.ts).
import type * as Wire from '@pal-workflow/types';
import type { PageSize } from '../documents/pdf-reader.js';
import { findSso } from '../storage/ssos.js';
import type { DomainContext } from './context.js';
import type { SignatureKind, TransactionDocumentState } from './document-state.js';
import { completedDigests } from './completed-documents.js';
import type { FieldInput } from './field-inputs.js';
import { fieldLabel } from './field-labels.js';
import { isGuest } from './ssos.js';
import { getPalDocuments, type DocumentContentType, type PalDocument } from './pal-documents.js';
import type { PalManifest } from './pal-manifest.js';
import { getPalDetails, getPalVersion } from './pals.js';
import type { ActionOutcome, BrowserSession, FormDraft } from './sessions.js';
import {
  initialDocumentState,
  loadDocumentState,
  loadUploads,
  type UploadInfo,
} from './transaction-documents.js';
import { getTransactionDetails } from './transactions.js';
import {
  fieldEditable,
  listItems,
  actionsOfPlace,
  offeredActions,
  uploadAllowed,
  signatureIsMine,
  documentsOpen,
  type PalAction,
  type PersonPlace,
} from './web-permissions.js';

export interface SessionView {
  pal: { id: string; name?: string; description?: string };
  /** The session's transaction; absent in a console session. */
  transaction?: {
    id: string;
    name?: string;
    description?: string;
    /** The free-text business status. */
    status: string;
    systemStatus: string;
    /** When its row last changed (for a completed one: when it completed), ISO 8601. */
    modifiedDate?: string;
  };
  /** When the view was made, ISO 8601 (the page says how long a completed PDF has been awaited). */
  now?: string;
  /** True in a console session (no transaction). */
  console: boolean;
  person: {
    /** Null for an anonymous session. */
    sso: string | null;
    /** First and last name of the SSO; null for an anonymous session. */
    name: string | null;
    /** Null in a console session. */
    role: string | null;
    /** A console session's profile (the grant it entered under, C6's `useEnterpriseProfile`). */
    profile?: 'enterprise' | 'personal' | null;
  };
  /** The form's CSRF token (a hidden `csrf` control). */
  csrf: string;
  /**
   * Whether the person may change fields and signatures now: the transaction is OPEN and an
   * action is offered to them (without a button nothing they change could be sent).
   */
  documentsOpen: boolean;
  documents: SessionDocument[];
  /** Files the pal asks for (the manifest's `uploads`), for this person. */
  uploads: SessionUpload[];
  /** The most the files of one form may hold together (UPLOAD_MAX_MB), in bytes. */
  uploadMaxBytes: number;
  /** The buttons, in the manifest's order: `name` is the `action` control's value. */
  actions: { name: string; label: string }[];
  /** What the last action did, or null. */
  outcome: (Omit<ActionOutcome, 'draft'> & { label?: string }) | null;
  /** What the person typed in a form that did not go through: refill the controls with it. */
  draft: FormDraft | null;
}

export interface SessionDocument {
  /** 0-based place in the manifest's `documents`. */
  index: number;
  /** The path in the pal folder: the document's name. */
  file: string;
  contentType: DocumentContentType;
  description?: string;
  /** Each page as displayed: points for a PDF, pixels for an image. */
  pages: PageSize[];
  fields: SessionField[];
  signatures: SessionSignature[];
  /** SHA-256, base64: the file's as deployed, the completed PDF's once it is written. */
  digest: string;
  /**
   * The completed PDF is written (docs/web-mode.md): the page offers it for download at
   * `session/{handle}/documents/{index}/completed`.
   */
  completed: boolean;
}

export interface SessionField {
  /** The Field in the spec's wire form; its `id` names the form control. */
  field: Wire.Field;
  /** What a person reads beside it (domain/field-labels.ts). */
  label: string;
  /** The current value (CHECKBOX: "true" or "false"). */
  value: string;
  /** The person may change it now; otherwise it is shown read-only. */
  editable: boolean;
  /** What kind of value it holds, when the manifest says (its control's keyboard, autofill). */
  input?: FieldInput;
}

export interface SessionSignature {
  /** The Signature in the spec's wire form; `signature.{id}` names its control. */
  signature: Wire.Signature;
  /** For the person: its role is theirs (they may give it while `documentsOpen` and not `given`). */
  mine: boolean;
  required: boolean;
  /** The labels of the actions offered now that need it (their `signatures`). */
  neededFor: string[];
  /** Present once signed. */
  given?: {
    kind: SignatureKind;
    /** TYPED: the name as typed. */
    text?: string;
    /** DRAWN: the PNG, base64. */
    image?: string;
    /** Unix seconds. */
    recordTime: number;
    /** The signer's name as their SSO had it when signing; null for an anonymous signer. */
    signerName: string | null;
  };
}

export interface SessionUpload {
  /** `upload.{name}` names its file control (a multipart form). */
  name: string;
  label: string;
  /** The content types accepted (`accept` of the file input). */
  accept: string[];
  required: boolean;
  /** The person may upload it now (their role, the documents open). */
  editable: boolean;
  /** The file kept, if one was uploaded. */
  given?: { filename: string; contentType: string; size: number; uploadedAt: string };
  /**
   * The file chosen in the person's last form that did not go through: kept with the session,
   * and sent with the next submission unless they choose another.
   */
  draft?: { filename: string; size: number };
}

/** What the page needs to know of where the session stands: its pal version and the person. */
export interface SessionBasisView {
  manifest: PalManifest;
  documents: PalDocument[];
  states: TransactionDocumentState[];
  /** The uploads kept with the transaction (none in a console session). */
  uploads: UploadInfo[];
  place: PersonPlace;
  transaction: SessionView['transaction'];
  pal: SessionView['pal'];
}

/**
 * The pal version the session works on (a transaction's own version; a console pal's current
 * one), its documents as they stand, and the person's place. Shared by the page and the form.
 */
export async function loadSessionBasis(
  ctx: DomainContext,
  session: BrowserSession,
): Promise<SessionBasisView> {
  const palDetails = await getPalDetails(ctx, session.enterpriseId, session.palId);
  const pal = {
    id: palDetails.id,
    ...(palDetails.name !== undefined ? { name: palDetails.name } : {}),
    ...(palDetails.description !== undefined ? { description: palDetails.description } : {}),
  };
  if (session.transactionId === null) {
    const documents = await getPalDocuments(
      ctx,
      session.enterpriseId,
      session.palId,
      palDetails.version,
    );
    return {
      manifest: palDetails.manifest,
      documents,
      states: initialDocumentState(documents),
      uploads: [],
      place: { role: null, transaction: null },
      transaction: undefined,
      pal,
    };
  }
  const t = await getTransactionDetails(ctx, session.enterpriseId, session.transactionId);
  const [{ manifest }, documents] = await Promise.all([
    getPalVersion(ctx, session.enterpriseId, t.palId, t.palVersion),
    getPalDocuments(ctx, session.enterpriseId, t.palId, t.palVersion),
  ]);
  return {
    manifest,
    documents,
    states: await loadDocumentState(ctx.db, t.id, documents),
    uploads: await loadUploads(ctx.db, t.id),
    place: {
      role: session.role,
      transaction: { status: t.status, systemStatus: t.systemStatus },
    },
    transaction: {
      id: t.id,
      ...(t.name !== undefined ? { name: t.name } : {}),
      ...(t.description !== undefined ? { description: t.description } : {}),
      status: t.status,
      systemStatus: t.systemStatus,
      ...(t.modifiedDate !== undefined ? { modifiedDate: t.modifiedDate } : {}),
    },
    pal,
  };
}

/** The session page's data: everything it shows, for this person, now. */
export async function loadSessionView(
  ctx: DomainContext,
  session: BrowserSession,
): Promise<SessionView> {
  const basis = await loadSessionBasis(ctx, session);
  const sso = session.ssoId ? await findSso(ctx.db, session.enterpriseId, session.ssoId) : null;
  const { draft, savedAt: _savedAt, ...outcome } = session.outcome ?? { draft: undefined };
  const actions = offeredActions(basis.manifest.actions, basis.place);
  // A page with no button for the person (a claim they submitted, one returned by the manager)
  // shows every value read-only: live controls there would take what nobody can send.
  const mayChange = actions.length > 0;
  return {
    pal: basis.pal,
    ...(basis.transaction ? { transaction: basis.transaction } : {}),
    now: ctx.now().toISOString(),
    console: basis.transaction === undefined,
    person: {
      sso: session.ssoId,
      // A guest's name is made up ("Guest pF5HVIDfghCO"): not one to sign with, nor to be called.
      name: sso && !isGuest(sso) ? `${sso.firstName} ${sso.lastName}`.trim() : null,
      role: session.role,
      profile: session.profile,
    },
    csrf: session.csrf,
    documentsOpen: mayChange && documentsOpen(basis.place),
    documents: await withCompletedDigests(ctx, session, sessionDocuments(basis, actions)),
    uploads: (basis.manifest.uploads ?? []).map((u) => {
      const given = basis.uploads.find((k) => k.name === u.name);
      const editable = mayChange && uploadAllowed(u, basis.place);
      // Not sent once a file of that name was uploaded after it was kept (session-form.ts).
      const keptFile = editable ? draft?.files?.[u.name] : undefined;
      const kept =
        keptFile && !(given && keptFile.keptAt !== undefined && given.uploadedAt > keptFile.keptAt)
          ? { filename: keptFile.filename, size: keptFile.size }
          : undefined;
      return {
        name: u.name,
        label: u.label,
        accept: listItems(u.accept),
        required: u.required,
        editable,
        ...(kept ? { draft: kept } : {}),
        ...(given
          ? {
              given: {
                filename: given.filename,
                contentType: given.contentType,
                size: given.size,
                uploadedAt: given.uploadedAt,
              },
            }
          : {}),
      };
    }),
    uploadMaxBytes: ctx.config.uploadMaxBytes,
    actions: actions.map(({ name, label }) => ({ name, label })),
    // Named by its button's label, which the manifest keeps after the action is offered no more.
    // Its messages are left out once the transaction changed after it (another person's action):
    // they would contradict the page ("Check it, then approve" on an approved claim). What the
    // person typed stays: it is theirs.
    outcome:
      session.outcome && outcomeIsCurrent(session.outcome, basis.transaction)
        ? labelled(outcome as Omit<ActionOutcome, 'draft'>, basis)
        : null,
    draft: draft ?? null,
  };
}

/** The outcome was kept after the transaction's last change (or there is no transaction). */
function outcomeIsCurrent(
  outcome: ActionOutcome,
  transaction: { modifiedDate?: string } | undefined,
): boolean {
  const changed = transaction?.modifiedDate;
  return outcome.savedAt === undefined || changed === undefined || changed <= outcome.savedAt;
}

function labelled(
  outcome: Omit<ActionOutcome, 'draft'>,
  basis: { manifest: PalManifest; place: PersonPlace },
): Omit<ActionOutcome, 'draft'> & { label?: string } {
  const label = actionsOfPlace(basis.manifest.actions, basis.place).find(
    (a) => a.name === outcome.action,
  )?.label;
  return label === undefined ? outcome : { ...outcome, label };
}

/** The documents whose completed PDF is written carry its digest (domain/completed-documents.ts). */
async function withCompletedDigests(
  ctx: DomainContext,
  session: BrowserSession,
  documents: SessionDocument[],
): Promise<SessionDocument[]> {
  if (session.transactionId === null) return documents;
  const digests = await completedDigests(ctx, session.enterpriseId, session.transactionId);
  return documents.map((d) => {
    const digest = digests.get(d.file);
    return digest ? { ...d, digest, completed: true } : d;
  });
}

/**
 * The documents with their values and signatures, for the person's place; with `mayChange`
 * false (no action offered to them) no field is editable.
 */
/**
 * The documents as the person sees them, given the actions offered to them now: with none, every
 * value is read-only.
 */
export function sessionDocuments(
  basis: SessionBasisView,
  actions: readonly PalAction[],
): SessionDocument[] {
  const mayChange = actions.length > 0;
  return basis.documents.map((document, index) => {
    const state = basis.states[index]!;
    return {
      index,
      file: document.file,
      contentType: document.contentType,
      ...(document.description !== undefined ? { description: document.description } : {}),
      pages: document.pages,
      digest: document.digest,
      completed: false,
      fields: document.fields.map((field) => ({
        field,
        label: fieldLabel(document.labels, field.id ?? ''),
        value: (field.id !== undefined ? state.values[field.id] : undefined) ?? '',
        editable: mayChange && field.id !== undefined && fieldEditable(field, basis.place),
        ...(field.id !== undefined && document.inputs && Object.hasOwn(document.inputs, field.id)
          ? { input: document.inputs[field.id] }
          : {}),
      })),
      signatures: document.signatures.map((signature) => {
        const given = state.signatures.find((s) => s.id === signature.id);
        return {
          signature: given ? { ...signature, recordTime: given.recordTime } : signature,
          mine: signatureIsMine(signature, basis.place),
          required: signature.required,
          neededFor: actions
            .filter((a) => signature.id !== undefined && a.signatures?.includes(signature.id))
            .map((a) => a.label),
          ...(given
            ? {
                given: {
                  kind: given.kind,
                  ...(given.text !== undefined ? { text: given.text } : {}),
                  ...(given.image !== undefined ? { image: given.image } : {}),
                  recordTime: given.recordTime,
                  signerName: given.evidence.name,
                },
              }
            : {}),
        };
      }),
    };
  });
}
