// The pages a person sees after entering with a token (docs/entry.md):
//   GET  /{service_root}/enter/{token}  consumes the token, starts a session, 303 to its page
//                                        (HEAD: 200, and the token left as it was)
//   GET  /{service_root}/session/{handle}   the session's page: the console pal or the
//                                        transaction, its documents with their fields and
//                                        signatures, the actions offered, and the last outcome
//                                        (http/session-page.ts)
//   GET  /{service_root}/session/{handle}/documents/{index}   a document's file, for that page
//   POST /{service_root}/session/{handle}   the page's form: an offered action with the person's
//                                        values and signatures (CSRF token, same origin;
//                                        http/session-form.ts)
//   GET  /{service_root}/session        303 to the page of the browser's session last used
//   POST /{service_root}/session        307 to the page of the session whose CSRF token the form
//                                        carries (http/session-form.ts), else a 409 page
//   GET  /{service_root}/mail?encryptedToken=…&encryptedAction=…   a mailed link's confirm page:
//                                        changes nothing (mail scanners open links first)
//   POST /{service_root}/mail?…          enters the transaction as the recipient and runs the action
// A session has a cookie of its own (http/session-cookies.ts) and its page an address of its own:
// two links opened in one browser are two pages, each acting for its own transaction, however
// the person goes back, reloads or switches tabs. An unknown, used or expired token is one 410
// page; a missing or ended session one 401 page, for every request; a session whose person may no longer act
// (domain/session-standing.ts) ends with a 403 page that says why; an action on a transaction
// whose systemStatus forbids runs is a 409 page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordRefusedToken } from '../domain/audit-attempts.js';
import type { WorkflowContext } from '../workflows/context.js';
import { isDomainError } from '../domain/errors.js';
import {
  MAIL_LINK_SESSIONS,
  liveSessionsOf,
  readSession,
  sessionHandle,
  type SessionRead,
} from '../domain/sessions.js';
import { getTransactionDetails } from '../domain/transactions.js';
import { escapeHtml } from '../html.js';
import { loadSessionView } from '../domain/session-view.js';
import { registerSessionForm } from './session-form.js';
import { readMailLink } from '../domain/mail-links.js';
import { findSso } from '../storage/ssos.js';
import { enter, enterFromMail, mailLinkSession } from '../workflows/entries.js';
import { sessionDocumentFile, sessionUploadFile } from '../domain/session-document-file.js';
import type { AssetUrls } from './assets.js';
import { registerCompletedDocumentRoute } from './completed-document-route.js';
import { sessionCookies, type SessionOfPage } from './session-cookies.js';
import {
  isGone,
  PAGE_CSP,
  SESSION_PAGE_CSP,
  sendHtml,
  sendPage,
  sendSandboxedFile,
  type PageText,
} from './page.js';
import { renderSessionPage, statusText, type SessionPagePaths } from './session-page.js';

const GONE: PageText = {
  title: 'This link is no longer valid',
  // One page for a token that is unknown, used or expired (no oracle): so it names each cause,
  // a link cut short or mistyped among them.
  body: '<h1>This link is no longer valid</h1><p>It was already used, it has expired, or it did not arrive whole (cut short, or changed on its way). Ask whoever sent it to you for a new one.</p>',
};
/**
 * The one page for a request without a live session, whatever it asked (the page, a form, a
 * document, a completed PDF) and whatever the cause: an ended session, or no cookie of it (an
 * idle end takes the cookie too, and an address opened in another browser or device has none).
 * Two pages for GET and POST, each naming one cause, sent people looking for the wrong one.
 */
const NO_SESSION: PageText = {
  title: 'Your session has ended',
  body: `<h1>Your session has ended</h1><p>This page is no longer open in this browser. Its session ended after 30 minutes without use, or 12 hours after it started (and a link from a mail keeps only the ${MAIL_LINK_SESSIONS} pages it opened last); or its address was opened in another browser or device than the one where its link was opened.</p><p>If you were sending a form, nothing in it was kept.</p><p>To go on, open your link again from the mail or the application that gave it to you, or ask whoever sent it for a new one.</p>`,
};
/** A session whose person may no longer act: why, in the domain's words. */
const withdrawn = (reason: string): PageText => ({
  title: 'Your access has ended',
  body: `<h1>Your access has ended</h1><p>${escapeHtml(reason)} This session has ended.</p>`,
});
const BAD_LINK: PageText = {
  title: 'This link is not valid',
  body: '<h1>This link is not valid</h1><p>It was changed or cut short on its way. Open it from the mail again.</p>',
};
/**
 * A session form that did not come from its page (another site, or no CSRF token of the
 * session): nothing of it may be kept, not even as the page's draft, which another site could
 * fill. The way on is a link (GET): "reload" re-posted the refused form.
 */
const refusedForm = (sessionPath: string): PageText => ({
  title: 'This form was refused',
  body: `<h1>This form was refused</h1><p>The service could not tell that it was sent from this page: it came from another site, or without the page’s own security code. So nothing in it was kept, and nothing was done.</p><p>Open the page again, fill the form in there and send it.</p><p><a href="${escapeHtml(sessionPath)}">Open the page again</a></p>`,
});
/** A mailed link's confirm form posted from another site: its page again, by a link (GET). */
const refusedMailForm = (confirmPath: string): PageText => ({
  title: 'This form was refused',
  body: `<h1>This form was refused</h1><p>It did not come from the page of your mail’s link, so nothing was opened.</p><p><a href="${escapeHtml(confirmPath)}">Open that page again</a></p>`,
});

export function registerEntryPages(
  app: FastifyInstance,
  domain: WorkflowContext,
  assets: AssetUrls,
): void {
  const root = domain.config.serviceRoot;
  const { publicServicePath } = domain.config;
  // The routes, as the proxy (if any) forwards them; and the addresses written into pages,
  // Locations and cookies, as the browser sees them (PUBLIC_URL's path first).
  const sessionRoot = `/${root}/session`;
  const publicSessionRoot = `${publicServicePath}/session`;
  const pathsOf = (handle: string): SessionPagePaths => ({
    session: `${publicSessionRoot}/${handle}`,
    document: (index) => `${publicSessionRoot}/${handle}/documents/${index}`,
    completed: (index) => `${publicSessionRoot}/${handle}/documents/${index}/completed`,
    upload: (name) => `${publicSessionRoot}/${handle}/uploads/${encodeURIComponent(name)}`,
  });
  const cookies = sessionCookies(publicServicePath, domain.config.publicUrl.startsWith('https:'));
  /** The page for a request without a live session; a withdrawn one also loses its cookie. */
  const noSession: SessionOfPage['noSession'] = (reply, read, handle) => {
    if (read.state === 'none') return sendPage(reply, 401, NO_SESSION.title, NO_SESSION.body);
    const text = withdrawn(read.reason);
    return sendPage(reply.header('Set-Cookie', cookies.drop(handle)), 403, text.title, text.body);
  };
  /**
   * The session of page `handle` as its cookie in `request` names it, its idle time reset. The
   * answer keeps a live session's cookie another 30 minutes, and drops one that names no session.
   */
  const sessionAt: SessionOfPage['sessionAt'] = async (request, reply, handle) => {
    const cookie = cookies.valueFor(request, handle);
    const read = await readSession(domain, cookie);
    if (read.state === 'live') reply.header('Set-Cookie', cookies.keep(read.cookie));
    else if (read.state === 'none' && cookie !== undefined)
      reply.header('Set-Cookie', cookies.drop(handle));
    return read;
  };
  /** The answer to an entry: the session's cookie, and 303 to its page. */
  // The answer's address held a single-use token or a mailed link's pair: not kept by a cache,
  // not named to the page's own requests as their Referer.
  const enterSession = async (request: FastifyRequest, reply: FastifyReply, value: string) =>
    reply
      .code(303)
      .header('Set-Cookie', await cookies.forEntry(domain, request, value))
      .header('Cache-Control', 'no-store')
      .header('Referrer-Policy', 'no-referrer')
      .header('Location', pathsOf(sessionHandle(value)).session)
      .send();

  // HEAD asks about the link without following it: a link checker or a mail scanner sends it, and
  // must not use up a single-use token before the person comes. What a GET would answer cannot be
  // known without redeeming, so every HEAD gets the same 200, and nothing is read or written.
  app.head(`/${root}/enter/:token`, (_request, reply) => sendHtml(reply, 200, '', PAGE_CSP));
  app.get<{ Params: { token: string } }>(
    `/${root}/enter/:token`,
    { exposeHeadRoute: false },
    async (request, reply) => {
      let value: string;
      try {
        value = await enter(domain, request.params.token, request.id);
      } catch (error) {
        await recordRefusedToken(
          domain,
          request.params.token,
          isDomainError(error) ? error.code : 'error',
        );
        if (isGone(error)) return sendPage(reply, 410, GONE.title, GONE.body);
        // What the token was for can no longer be done (a deleted SSO, an undeployed pal): a page
        // that says why, as for any person in a browser.
        if (isDomainError(error))
          return sendPage(
            reply,
            error.statusCode,
            'This link cannot be used now',
            `<h1>This link cannot be used now</h1><p>${escapeHtml(error.message)}</p>`,
          );
        throw error;
      }
      return enterSession(request, reply, value);
    },
  );

  type MailQuery = { Querystring: { encryptedToken?: string; encryptedAction?: string } };
  const mailLink = (query: MailQuery['Querystring']) =>
    readMailLink(
      domain.config,
      query.encryptedToken ?? '',
      query.encryptedAction ?? '',
      domain.now(),
    );
  const linkError = (reply: FastifyReply, error: unknown) => {
    if (isGone(error)) return sendPage(reply, 410, GONE.title, GONE.body);
    if (isDomainError(error) && (error.statusCode === 400 || error.statusCode === 404))
      return sendPage(reply, 400, BAD_LINK.title, BAD_LINK.body);
    throw error;
  };

  app.get<MailQuery>(`/${root}/mail`, async (request, reply) => {
    try {
      const link = mailLink(request.query);
      // Only a link that would enter shows its confirm page (410 otherwise, as the POST answers).
      await mailLinkSession(domain, link);
      const transaction = await getTransactionDetails(
        domain,
        link.enterpriseId,
        link.transactionId,
      );
      const name = transaction.name ?? transaction.palId;
      const recipient = await findSso(domain.db, link.enterpriseId, link.recipientSso);
      const you = recipient ? `${recipient.firstName} ${recipient.lastName}`.trim() : '';
      // What the person is about to open: its status, in the words of its page, and whose link
      // it is (a shared mailbox may hold several). Not its description: whoever opens the link,
      // a mail scanner too, reads this page before anything is checked.
      const about = transaction.status
        ? `<p id="status">Status: ${escapeHtml(statusText(transaction.status)!)}</p>`
        : '';
      return sendPage(
        reply,
        200,
        name,
        `<h1>${escapeHtml(name)}</h1>
${about}<p>The link in your mail opens this for you${you ? `, ${escapeHtml(you)},` : ''} in this browser.</p>
<form method="post"><button type="submit" id="confirm">Open ${escapeHtml(name)}</button></form>`,
      );
    } catch (error) {
      return linkError(reply, error);
    }
  });

  app.post<MailQuery>(`/${root}/mail`, async (request, reply) => {
    if (!sameOrigin(request, domain)) {
      // The address as the browser sees it: the route's, under PUBLIC_URL's path.
      const query = request.url.indexOf('?');
      const text = refusedMailForm(
        `${publicServicePath}/mail${query < 0 ? '' : request.url.slice(query)}`,
      );
      return sendPage(reply, 403, text.title, text.body);
    }
    let value: string;
    try {
      value = await enterFromMail(domain, mailLink(request.query), request.id);
    } catch (error) {
      return linkError(reply, error);
    }
    return enterSession(request, reply, value);
  });

  // An address without a session's handle (typed, or kept from before handles): the page of
  // the session this browser used last whose person may still act. One whose person may not is
  // ended on the way, as its own page would end it, and its cookie dropped; when none is left,
  // the first such one's page says why.
  app.get(sessionRoot, async (request, reply) => {
    const ended: { read: Extract<SessionRead, { state: 'withdrawn' }>; handle: string }[] = [];
    for (const { cookie } of await liveSessionsOf(domain, cookies.valuesOf(request))) {
      const read = await readSession(domain, cookie);
      const handle = sessionHandle(cookie);
      if (read.state === 'live') {
        for (const gone of ended) reply.header('Set-Cookie', cookies.drop(gone.handle));
        return reply.code(303).header('Location', pathsOf(handle).session).send();
      }
      if (read.state === 'withdrawn') ended.push({ read, handle });
    }
    const [first, ...others] = ended;
    if (first === undefined) return sendPage(reply, 401, NO_SESSION.title, NO_SESSION.body);
    for (const gone of others) reply.header('Set-Cookie', cookies.drop(gone.handle));
    return noSession(reply, first.read, first.handle);
  });

  app.get<{ Params: { handle: string } }>(`${sessionRoot}/:handle`, async (request, reply) => {
    const { handle } = request.params;
    const read = await sessionAt(request, reply, handle);
    if (read.state !== 'live') return noSession(reply, read, handle);
    const view = await loadSessionView(domain, read.session);
    return sendHtml(reply, 200, renderSessionPage(view, pathsOf(handle), assets), SESSION_PAGE_CSP);
  });

  // The file a page draws (pdf.js fetches it) or shows (an image document): only the session's
  // own pal version's, by its place in the manifest.
  app.get<{ Params: { handle: string; index: string } }>(
    `${sessionRoot}/:handle/documents/:index`,
    async (request, reply) => {
      const read = await sessionAt(request, reply, request.params.handle);
      if (read.state !== 'live') return noSession(reply, read, request.params.handle);
      const notFound = () => sendPage(reply, 404, 'No such document', '<h1>No such document</h1>');
      if (!/^\d{1,4}$/.test(request.params.index)) return notFound();
      let file;
      try {
        file = await sessionDocumentFile(domain, read.session, Number(request.params.index));
      } catch (error) {
        if (isDomainError(error) && error.statusCode === 404) return notFound();
        throw error;
      }
      return sendSandboxedFile(reply.header('Cache-Control', 'private, no-store'), {
        contentType: file.document.contentType,
        disposition: `inline; filename="${file.document.file.replace(/^.*\//, '').replace(/[^\w.-]/g, '_')}"`,
        content: file.content,
      });
    },
  );

  // A file uploaded on the transaction's pages, shown in the browser: only for a live session of
  // that transaction, and only as the kind its bytes were checked to be (PDF, PNG, JPEG), in a
  // sandbox (a PDF's scripts run nowhere near the service's origin).
  app.get<{ Params: { handle: string; name: string } }>(
    `${sessionRoot}/:handle/uploads/:name`,
    async (request, reply) => {
      const read = await sessionAt(request, reply, request.params.handle);
      if (read.state !== 'live') return noSession(reply, read, request.params.handle);
      let file;
      try {
        file = await sessionUploadFile(domain, read.session, request.params.name);
      } catch (error) {
        if (isDomainError(error) && error.statusCode === 404)
          return sendPage(
            reply,
            404,
            'No such file',
            '<h1>No such file</h1><p>Nothing was uploaded under this name here. Go back to the page: it lists the files uploaded so far.</p>',
          );
        throw error;
      }
      return sendSandboxedFile(reply.header('Cache-Control', 'private, no-store'), {
        contentType: file.contentType,
        disposition: inlineDisposition(file.filename),
        content: file.content,
      });
    },
  );

  registerCompletedDocumentRoute(app, domain, {
    path: `${sessionRoot}/:handle/documents/:index/completed`,
    sessionAt,
    noSession,
  });

  // The session form has a scope of its own: its parsers take a drawn signature and multipart.
  void app.register((scope) =>
    registerSessionForm(scope, domain, {
      sessionRoot,
      publicSessionRoot,
      pathsOf,
      noSession,
      sessionAt,
      cookies,
      sameOrigin: (request) => sameOrigin(request, domain),
      refused: refusedForm,
    }),
  );
}

/**
 * A form post must come from this service's own pages. Browsers say where from: `Sec-Fetch-Site`
 * (`same-origin`), and `Origin`, which is `null` under this page's `Referrer-Policy: no-referrer`
 * and then says nothing. A post from another site is refused even with a stolen CSRF token.
 */
function sameOrigin(request: FastifyRequest, domain: WorkflowContext): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.headers.origin;
  if (origin === undefined || origin === 'null') return true;
  const own = [
    new URL(domain.config.publicUrl).origin,
    `${request.protocol}://${request.headers.host}`,
  ];
  return own.includes(origin);
}

/**
 * `inline` with a person's file name: as it is for browsers that read RFC 6266's `filename*`
 * (all of today's), and in ASCII for the rest.
 */
function inlineDisposition(filename: string): string {
  const ascii = filename.replace(/[^\w.-]/g, '_') || 'file';
  // RFC 8187's attr-char has no ' ( ) * (which encodeURIComponent leaves).
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `inline; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
