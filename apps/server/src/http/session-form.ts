// POST /{service_root}/session/{handle}: the session page's form (docs/entry.md, "The session
// form"). Each field's control is named by its field id, a signature by `signature.{id}`, the
// button by `action`, beside `csrf`; posted as `application/x-www-form-urlencoded` or
// `multipart/form-data`, within the caps below. The form is judged by domain/form-submission.ts:
// an action not offered to the person now is a 403 page, and nothing runs; a value or signature
// that cannot be taken, a missing required signature, or a run that failed, brings the person
// back to the page with the messages and what they typed. Never a 500 for a posted form: a
// malformed or oversized body is a page too.
import multipart from '@fastify/multipart';
import { parseUrlEncoded } from '@pal-workflow/server-skeleton';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError } from '../domain/errors.js';
import {
  judgeForm,
  FIELD_VALUE_MAX,
  UPLOAD_CONTROL_PREFIX,
  type PostedFile,
} from '../domain/form-submission.js';
import { MAX_UPLOADS } from '../domain/pal-manifest.js';
import { loadSessionBasis, type SessionBasisView } from '../domain/session-view.js';
import {
  csrfMatches,
  draftFilesOf,
  liveSessionsOf,
  saveOutcome,
  sessionHandle,
  SESSION_HANDLE,
  type KeptFile,
  type SessionRead,
} from '../domain/sessions.js';
import { uploadAllowed } from '../domain/web-permissions.js';
import { escapeHtml } from '../html.js';
import { isGuest } from '../domain/ssos.js';
import { findSso } from '../storage/ssos.js';
import type { WorkflowContext } from '../workflows/context.js';
import { runAction } from '../workflows/entries.js';
import { sendPage } from './page.js';
import type { SessionCookies, SessionOfPage } from './session-cookies.js';
import type { SessionPagePaths } from './session-page.js';

/**
 * The largest urlencoded session form, and the most its text parts may hold as multipart: room
 * for every field of a large form and a few drawn signatures (a 100 KiB PNG is about 140 KiB
 * as an urlencoded data URL).
 */
export const SESSION_FORM_LIMIT_BYTES = 1024 * 1024;
/** Controls one session form may post: fields and signatures of every document, action, csrf. */
export const SESSION_FORM_MAX_FIELDS = 2000;
/** Files one session form may upload (multipart only): as many as a manifest may ask for. */
export const SESSION_FORM_MAX_FILES = MAX_UPLOADS;
/** The longest control name: a field id (200) with a prefix. */
const MAX_NAME_BYTES = 256;

/** What a posted form holds: each control's last value, and the files of a multipart one. */
export interface PostedForm {
  fields: Record<string, string>;
  files?: Record<string, PostedFile>;
  /** The text controls of a multipart form whose bytes were not UTF-8 (read with U+FFFD). */
  notUtf8?: Set<string>;
}

const OUTDATED = {
  title: 'This form was not sent',
  body: '<h1>This form was not sent</h1><p>It does not say which of the pages open in this browser it belongs to (the service may have been updated since the page was opened). Nothing you filled in on it was saved. Open the link you came from again to go on.</p>',
};

/** A posted form the page refuses before judging it: why, as a page. */
class FormRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A multipart form's caps in bytes: one text control's value, and its files together. */
interface PartCaps {
  text: number;
  files: number;
}

/** The longest data URL of a drawn signature of `maxBytes`, in characters. */
function dataUrlLength(maxBytes: number): number {
  return 'data:image/png;base64,'.length + Math.ceil(maxBytes / 3) * 4;
}

export interface SessionFormHelpers extends SessionOfPage {
  /** `/{service_root}/session`, below which each session's page has its route. */
  sessionRoot: string;
  /** The same as the browser sees it, under PUBLIC_URL's path (Config.publicServicePath). */
  publicSessionRoot: string;
  pathsOf: (handle: string) => SessionPagePaths;
  cookies: SessionCookies;
  sameOrigin: (request: FastifyRequest) => boolean;
  /** The page for a form that did not come from its page (sessionPath: the way back, a GET). */
  refused: (sessionPath: string) => { title: string; body: string };
}

/** The session form's route, in a scope of its own with the parsers its bodies need. */
export async function registerSessionForm(
  scope: FastifyInstance,
  domain: WorkflowContext,
  helpers: SessionFormHelpers,
): Promise<void> {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: SESSION_FORM_LIMIT_BYTES },
    (_request, body, done) => {
      try {
        const raw = parseUrlEncoded(body as Buffer, {
          maxFields: SESSION_FORM_MAX_FIELDS,
          maxFiles: 0,
        });
        const fields = Object.create(null) as Record<string, string>;
        for (const [name, value] of Object.entries(raw))
          if (value !== undefined)
            fields[name] = Array.isArray(value) ? value[value.length - 1]! : value;
        done(null, { fields } satisfies PostedForm);
      } catch (error) {
        done(error as Error);
      }
    },
  );
  const caps: PartCaps = {
    // One control's value: a field's longest value in UTF-8, or a drawn signature's data URL.
    text: Math.max(FIELD_VALUE_MAX * 4, dataUrlLength(domain.config.signatureMaxBytes)),
    files: domain.config.uploadMaxBytes,
  };
  await scope.register(multipart, {
    // A file past its cap is cut and marked truncated, not thrown (readMultipart).
    throwFileSizeLimit: false,
    // Every part comes as its bytes, and readMultipart reads a text part as UTF-8 itself (the
    // page's charset; a browser names none on a part): busboy would decode a part by the charset
    // it names (base64, UTF-16, …) or parse one typed application/json, and put U+FFFD for bytes
    // that are not UTF-8, so that a value would be kept changed.
    isPartAFile: () => true,
    limits: {
      // Per part: an upload's cap, or a text control's (readMultipart stops that one sooner).
      fileSize: Math.max(caps.files, caps.text),
      files: SESSION_FORM_MAX_FIELDS + SESSION_FORM_MAX_FILES,
      parts: SESSION_FORM_MAX_FIELDS + SESSION_FORM_MAX_FILES,
      headerPairs: 100,
    },
  });
  // A body the parsers refuse (too large, too many fields, malformed) is a page, as any answer
  // to a person in a browser; anything else goes on to the service's error handler.
  scope.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode;
    if (status === undefined || status < 400 || status >= 500) throw error;
    // The page to go back to, if the address names one (its handle is only a name here: no
    // session was read).
    const { handle } = request.params as { handle?: string };
    const back =
      handle !== undefined && SESSION_HANDLE.test(handle)
        ? helpers.pathsOf(handle).session
        : helpers.publicSessionRoot;
    return sendFormRefused(reply, status, error.message, back);
  });

  // Who may post is judged before the body is read (Fastify reads a body before the handler):
  // a request that holds no live session is answered at once, so nobody without one can make the
  // server hold a body of up to SESSION_FORM_LIMIT_BYTES, sent slowly or never finished, per
  // connection. The session read here is the one the handler goes on with.
  const reads = new WeakMap<FastifyRequest, Extract<SessionRead, { state: 'live' }>>();
  const liveOnes = new WeakMap<FastifyRequest, { cookie: string; csrf: string }[]>();
  scope.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'POST') return;
    const { handle } = request.params as { handle?: string };
    if (handle === undefined) {
      const live = await liveSessionsOf(domain, helpers.cookies.valuesOf(request));
      if (live.length === 0) return sendPage(reply, 409, OUTDATED.title, OUTDATED.body);
      liveOnes.set(request, live);
      return;
    }
    const read = await helpers.sessionAt(request, reply, handle);
    if (read.state !== 'live') {
      helpers.noSession(reply, read, handle);
      return reply;
    }
    reads.set(request, read);
  });

  // A form posted to the address without a handle: a page of before session pages had
  // addresses of their own (a deploy while it was open), or a client that posts there. The CSRF
  // token says which of the browser's sessions it is for: 307 to that page, where the same
  // form is taken (the browser posts it again). Without such a session nothing is taken.
  scope.post(helpers.sessionRoot, async (request, reply) => {
    // Only a browser that holds a live session has a page to be sent to (onRequest, above).
    const live = liveOnes.get(request)!;
    // A multipart form (a page with an upload) is read here for its token alone: its files are
    // passed over unread, and the page reads them within its caps when the browser sends the
    // form there again.
    const form = await readForm(request, caps, 'skip files');
    if (form instanceof FormRefused)
      return sendFormRefused(reply, form.status, form.message, helpers.publicSessionRoot);
    const { csrf } = form.fields;
    const own = live.find((session) => csrfMatches(session, csrf));
    if (!own) return sendPage(reply, 409, OUTDATED.title, OUTDATED.body);
    return reply
      .code(307)
      .header('Location', helpers.pathsOf(sessionHandle(own.cookie)).session)
      .send();
  });

  scope.post<{ Params: { handle: string } }>(
    `${helpers.sessionRoot}/:handle`,
    async (request, reply) => {
      const { handle } = request.params;
      const sessionPath = helpers.pathsOf(handle).session;
      // Live, as onRequest found it before the body was read.
      const { session, cookie } = reads.get(request)!;
      const form = await readForm(request, caps);
      if (form instanceof FormRefused)
        return sendFormRefused(reply, form.status, form.message, sessionPath);
      if (!helpers.sameOrigin(request) || !csrfMatches(session, form.fields.csrf)) {
        const text = helpers.refused(sessionPath);
        return sendPage(reply, 403, text.title, text.body);
      }

      const basis = await loadSessionBasis(domain, session);
      const sso = session.ssoId
        ? await findSso(domain.db, session.enterpriseId, session.ssoId)
        : null;
      // A guest is known by a made-up name and address only: they sign with a name they type.
      const known = sso && !isGuest(sso) ? sso : null;
      const { verdict, ignored } = judgeForm(
        basis,
        form.fields,
        {
          sso: session.ssoId,
          name: known ? `${known.firstName} ${known.lastName}`.trim() : null,
          email: known?.email ?? null,
          ipAddress: request.ip,
          userAgent: (request.headers['user-agent'] ?? '').slice(0, 512),
        },
        { signatureMaxBytes: domain.config.signatureMaxBytes },
        domain.now(),
        session.outcome?.draft?.files
          ? withDraftFiles(form.files ?? {}, await draftFilesOf(domain, cookie), {
              maxBytes: domain.config.uploadMaxBytes,
              usable: (file) => keptFileUsable(basis, file),
            })
          : form.files,
        form.notUtf8,
      );
      if (ignored.length > 0)
        request.log.warn(
          { fields: ignored, transactionId: session.transactionId },
          'posted values for fields the person may not edit were ignored',
        );
      if (verdict.kind === 'refused')
        return sendFormRefused(reply, verdict.status, verdict.message, sessionPath);
      if (verdict.kind === 'incomplete') {
        await saveOutcome(
          domain,
          cookie,
          {
            action: verdict.action,
            ran: false,
            success: false,
            messages: verdict.messages,
            draft: verdict.draft,
          },
          { files: verdict.draftFiles, session },
        );
        return reply.code(303).header('Location', sessionPath).send();
      }
      let outcome;
      try {
        outcome = await runAction(domain, session, verdict.action, verdict.values, request.id, {
          sso: sso ?? null,
          signatures: verdict.signatures,
          uploads: verdict.uploads,
          submission: verdict.submission,
        });
      } catch (error) {
        // The transaction's systemStatus forbids runs (the rule of T6 and T9): nothing ran.
        if (!(error instanceof ConflictError)) throw error;
        return sendPage(
          reply,
          409,
          'This action cannot run now',
          `<h1>This action cannot run now</h1><p>${escapeHtml(error.message)}.</p><p><a href="${escapeHtml(sessionPath)}">Back to the transaction</a></p>`,
        );
      }
      const done = outcome.ran && outcome.success;
      await saveOutcome(
        domain,
        cookie,
        done ? { ...outcome, pressed: true } : { ...outcome, pressed: true, draft: verdict.draft },
        // The form's files wait for its next submission; once it went through, none do (also
        // those another tab of the session kept while this one ran).
        { files: done ? [] : verdict.draftFiles, session },
      );
      return reply.code(303).header('Location', sessionPath).send();
    },
  );
}

/**
 * The posted files, with the session's kept files (its last form that did not go through) for
 * the uploads whose control came empty: the person chose them once and need not again. A kept
 * file is left out when it is no longer usable (below), and stands as over the cap, said as
 * kept, when the form's chosen files leave no room for it within UPLOAD_MAX_MB.
 */
function withDraftFiles(
  posted: Readonly<Record<string, PostedFile>>,
  kept: readonly KeptFile[],
  { maxBytes, usable }: { maxBytes: number; usable: (file: KeptFile) => boolean },
): Record<string, PostedFile> {
  const files: Record<string, PostedFile> = Object.assign(Object.create(null), posted);
  let bytes = Object.values(posted).reduce((sum, f) => sum + f.bytes.length, 0);
  for (const file of kept) {
    const control = `${UPLOAD_CONTROL_PREFIX}${file.name}`;
    const chosen = files[control];
    if (chosen && !(chosen.bytes.length === 0 && chosen.filename === '')) continue;
    if (!usable(file)) continue;
    const { filename, content } = file;
    if (bytes + content.length > maxBytes) {
      files[control] = {
        filename,
        bytes: new Uint8Array(),
        overCapMb: maxBytes / (1024 * 1024),
        kept: true,
      };
      continue;
    }
    bytes += content.length;
    files[control] = { filename, bytes: content, kept: true };
  }
  return files;
}

/**
 * A kept file goes with the form while the person may give that upload, and while nobody has
 * uploaded one of that name since it was kept: an older choice must not replace a newer file
 * (another person's, or theirs from another tab) that the page did not show when it was chosen.
 */
function keptFileUsable(basis: SessionBasisView, file: KeptFile): boolean {
  const upload = basis.manifest.uploads?.find((u) => u.name === file.name);
  if (upload === undefined || !uploadAllowed(upload, basis.place)) return false;
  const current = basis.uploads.find((u) => u.name === file.name);
  return current === undefined || current.uploadedAt <= file.savedAt;
}

/** The 4xx status a multipart error carries (a cap: 413), or 400 for any other. */
function httpStatusOf(error: unknown): number {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : 400;
}

/**
 * A form that could not be read as the page's (past its caps, malformed, or an action not offered):
 * nothing of it could be kept as the page's draft, and the page says so. The link opens the page
 * as it stands (a GET: never the form again).
 */
function sendFormRefused(reply: FastifyReply, status: number, message: string, back: string) {
  return sendPage(
    reply,
    status,
    'This form was refused',
    `<h1>This form was refused</h1><p>${escapeHtml(message)}</p><p>Nothing in it was kept, and nothing was done.</p><p><a href="${escapeHtml(back)}">Open the page as it is now</a></p>`,
  );
}

/** How much of a refused form's rest is read, and for how long, before its answer is sent. */
const DRAIN = { bytes: 16 * 1024 * 1024, ms: 10_000 } as const;

/**
 * Reads and drops the rest of a body that was refused part-way (the parser stops reading it), so
 * that the browser, still sending, gets the page: a socket closed on input it never read is
 * reset, and a browser shows the reset instead of the answer. Past DRAIN the answer goes anyway,
 * and the connection closes with it (app.ts).
 */
async function drainBody(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (raw.complete || raw.destroyed) return;
  await new Promise<void>((done) => {
    let read = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', finish).off('close', finish).off('error', finish);
      raw.pause();
      done();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN.bytes) finish();
    };
    const timer = setTimeout(finish, DRAIN.ms);
    raw.on('data', onData).once('end', finish).once('close', finish).once('error', finish);
    raw.resume();
  });
}

/**
 * The form a request carries: parsed already when urlencoded, read from its parts when multipart.
 * A body that cannot be read is a FormRefused to answer with, not a throw.
 */
async function readForm(
  request: FastifyRequest,
  caps: PartCaps,
  files: 'keep files' | 'skip files' = 'keep files',
): Promise<PostedForm | FormRefused> {
  if (!request.isMultipart()) return (request.body as PostedForm | undefined) ?? { fields: {} };
  try {
    return await readMultipart(request, caps, files);
  } catch (error) {
    request.log.info({ err: error }, 'a session form could not be read');
    await drainBody(request);
    if (error instanceof FormRefused) return error;
    // Whatever else reading the parts throws is the body's fault too: a part over its cap (413),
    // or a malformed body that busboy gave up on (400).
    const status = httpStatusOf(error);
    return new FormRefused(
      status,
      status === 400
        ? 'the form is not a readable multipart/form-data body'
        : (error as Error).message,
    );
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const LENIENT_UTF8 = new TextDecoder('utf-8');

/**
 * Reads a multipart form within the scope's caps; its text parts together within
 * SESSION_FORM_LIMIT_BYTES, its files together within UPLOAD_MAX_MB (or each file drained
 * unread). A truncated value is refused, never taken cut short.
 */
async function readMultipart(
  request: FastifyRequest,
  caps: PartCaps,
  keep: 'keep files' | 'skip files',
): Promise<PostedForm> {
  const fields = Object.create(null) as Record<string, string>;
  const files = Object.create(null) as Record<string, PostedFile>;
  const notUtf8 = new Set<string>();
  let textBytes = 0;
  let fileBytes = 0;
  let uploads = 0;
  let texts = 0;
  const capMb = caps.files / (1024 * 1024);
  // A file past the cap is read no further and kept as "too large" (the page says so, with the
  // person's values), not thrown: a person can choose any file.
  for await (const part of request.parts()) {
    if (part.type !== 'file') throw new Error('isPartAFile makes every part a file');
    // busboy caps no name in multipart (its fieldNameSize is for urlencoded bodies only).
    if (Buffer.byteLength(part.fieldname) > MAX_NAME_BYTES)
      throw new FormRefused(413, `the form names a control longer than ${MAX_NAME_BYTES} bytes`);
    // A text control's part names no filename; an upload's does, "" when no file was chosen.
    if (part.filename === undefined) {
      if (++texts > SESSION_FORM_MAX_FIELDS)
        throw new FormRefused(413, `the form holds more than ${SESSION_FORM_MAX_FIELDS} controls`);
      textBytes += Buffer.byteLength(part.fieldname);
      const chunks: Buffer[] = [];
      let length = 0;
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        length += chunk.length;
        textBytes += chunk.length;
        if (length > caps.text)
          throw new FormRefused(413, `the form's control “${part.fieldname}” is too long`);
        if (textBytes > SESSION_FORM_LIMIT_BYTES)
          throw new FormRefused(
            413,
            `the form holds more than ${SESSION_FORM_LIMIT_BYTES} bytes of text`,
          );
        chunks.push(chunk);
      }
      // Cut by the parser's per-part cap (larger than the text cap, so not met today): a value is
      // never taken cut short.
      if (part.file.truncated)
        throw new FormRefused(413, `the form's control “${part.fieldname}” is too long`);
      // Bytes that are not UTF-8 (a lone surrogate written as UTF-8, Latin-1) come only from a
      // hand-made body: read with U+FFFD for each bad sequence, and named, so that the judge
      // brings the person back to the page with the rest of the form rather than refusing it all.
      const bytes = Buffer.concat(chunks);
      try {
        fields[part.fieldname] = UTF8.decode(bytes);
      } catch {
        fields[part.fieldname] = LENIENT_UTF8.decode(bytes);
        notUtf8.add(part.fieldname);
      }
      continue;
    }
    // The parser counts text controls among its files now: the uploads are counted here, so that a
    // form of thousands of files is refused, not read or drained one after the other.
    if (++uploads > SESSION_FORM_MAX_FILES)
      throw new FormRefused(413, `the form holds more than ${SESSION_FORM_MAX_FILES} files`);
    if (keep === 'skip files') {
      part.file.resume();
      continue;
    }
    if (!part.fieldname.startsWith(UPLOAD_CONTROL_PREFIX))
      throw new FormRefused(400, `the form's file “${part.fieldname}” is not an upload`);
    // Read within the parser's per-part cap (past it the parser stops and drains the part); the
    // files of one form together within UPLOAD_MAX_MB too, so a form holds at most about twice
    // that in memory.
    const bytes = await part.toBuffer();
    const alone = part.file.truncated || bytes.length > caps.files;
    if (alone || fileBytes + bytes.length > caps.files) {
      files[part.fieldname] = {
        filename: part.filename,
        bytes: new Uint8Array(),
        overCapMb: capMb,
        // Too large alone, or only with the files before it: the page says which.
        ...(alone ? {} : { together: true }),
      };
      continue;
    }
    fileBytes += bytes.length;
    files[part.fieldname] = { filename: part.filename, bytes };
  }
  return { fields, files, notUtf8 };
}
