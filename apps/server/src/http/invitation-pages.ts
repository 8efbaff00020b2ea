// The invitation pages. An invitation link must survive mail scanners that open every link first
// (docs/entry.md): its GET shows a confirm page and changes nothing; the POST from that page does
// the work. An unknown, used or expired link answers 410 with the same page for all.
import type { FastifyInstance } from 'fastify';
import type { DomainContext } from '../domain/context.js';
import { acceptInvitation, describeInvitation } from '../domain/invitations.js';
import { escapeHtml } from '../html.js';
import { sendGonePageOrThrow, sendPage, type PageText } from './page.js';

const GONE: PageText = {
  title: 'This link is no longer valid',
  body: '<h1>This link is no longer valid</h1><p>It was already used, or it has expired. Ask for a new invitation.</p>',
};

export function registerInvitationPages(app: FastifyInstance, domain: DomainContext): void {
  const root = domain.config.serviceRoot;
  app.get<{ Params: { token: string } }>(`/${root}/invitations/:token`, async (request, reply) => {
    try {
      const invitation = await describeInvitation(domain, request.params.token);
      return sendPage(
        reply,
        200,
        'Accept your invitation',
        `<h1>Accept your invitation</h1>
<p>${escapeHtml(invitation.enterpriseName)} invites <strong>${escapeHtml(invitation.email)}</strong> to use its application.</p>
<form method="post"><button type="submit" id="accept">Accept the invitation</button></form>`,
      );
    } catch (error) {
      return sendGonePageOrThrow(reply, error, GONE);
    }
  });

  // Answered by a redirect to a page of its own (post, redirect, get): a reload of the answer
  // would post the used link again, and show a person who just accepted "no longer valid".
  // The page names no one: its address is the same for every invitation.
  const acceptedPath = `/${root}/invitations/accepted`;
  // Where the browser is sent: the same page as the person reaches it (PUBLIC_URL's path).
  const acceptedAddress = `${domain.config.publicServicePath}/invitations/accepted`;
  app.get(acceptedPath, (_request, reply) =>
    sendPage(
      reply,
      200,
      'Invitation accepted',
      `<h1 id="accepted">Invitation accepted</h1><p>You can now use the application that invited you. You can close this page.</p>`,
    ),
  );

  app.post<{ Params: { token: string } }>(`/${root}/invitations/:token`, async (request, reply) => {
    try {
      await acceptInvitation(domain, request.params.token);
      return reply.code(303).header('Location', acceptedAddress).send();
    } catch (error) {
      return sendGonePageOrThrow(reply, error, GONE);
    }
  });
}
