// The content of E3's invitation mail, as text and HTML; domain/invitations.ts sends it.
import { escapeHtml } from '../html.js';
import type { MailMessage } from './mailer.js';

export interface InvitationMailInput {
  to: string;
  firstName: string;
  lastName: string;
  enterpriseName: string;
  link: string;
  /** ISO-8601 UTC; shown to the minute. */
  expiresAt: string;
}

export function invitationMail(m: InvitationMailInput): MailMessage {
  const expires = `${m.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  const text = [
    `Hello ${m.firstName} ${m.lastName},`,
    '',
    `${m.enterpriseName} invites you to use its Pal Workflow applications with this address.`,
    'Open the link below and confirm to accept the invitation:',
    '',
    m.link,
    '',
    `The link works once and until ${expires}.`,
    'If you did not expect this invitation, ignore this mail.',
  ].join('\n');
  const html = [
    `<p>Hello ${escapeHtml(m.firstName)} ${escapeHtml(m.lastName)},</p>`,
    `<p>${escapeHtml(m.enterpriseName)} invites you to use its Pal Workflow applications with this address.</p>`,
    `<p><a href="${escapeHtml(m.link)}">Open the invitation</a> and confirm to accept it.</p>`,
    `<p>The link works once and until ${escapeHtml(expires)}. If you did not expect this invitation, ignore this mail.</p>`,
  ].join('\n');
  return { to: m.to, subject: `Invitation from ${m.enterpriseName}`, text, html };
}
