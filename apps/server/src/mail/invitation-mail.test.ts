import { describe, expect, it } from 'vitest';
import { invitationMail } from './invitation-mail.js';

const INPUT = {
  to: 'alice@example.com',
  firstName: 'Alice',
  lastName: 'Ng',
  enterpriseName: 'Acme',
  link: 'https://pal.example.com/services/invitations/abc',
  expiresAt: '2026-03-04T05:06:07.890Z',
};

describe('invitationMail', () => {
  it('addresses the person, names the enterprise, holds the link and its expiry to the minute', () => {
    const mail = invitationMail(INPUT);
    expect(mail.to).toBe('alice@example.com');
    expect(mail.subject).toBe('Invitation from Acme');
    expect(mail.text.split('\n')).toEqual([
      'Hello Alice Ng,',
      '',
      'Acme invites you to use its Pal Workflow applications with this address.',
      'Open the link below and confirm to accept the invitation:',
      '',
      'https://pal.example.com/services/invitations/abc',
      '',
      'The link works once and until 2026-03-04 05:06 UTC.',
      'If you did not expect this invitation, ignore this mail.',
    ]);
    expect(mail.html).toContain(
      '<a href="https://pal.example.com/services/invitations/abc">Open the invitation</a>',
    );
    expect(mail.html).toContain('until 2026-03-04 05:06 UTC.');
  });

  it('escapes names and the link in the HTML part, and leaves the text part as given', () => {
    const mail = invitationMail({
      ...INPUT,
      firstName: '<b>Al</b>',
      lastName: `O'Neil & "Co"`,
      enterpriseName: 'A<script>',
      link: 'https://x.example/?a=1&b="2"',
    });
    expect(mail.html).toContain(
      '<p>Hello &#60;b&#62;Al&#60;/b&#62; O&#39;Neil &#38; &#34;Co&#34;,</p>',
    );
    expect(mail.html).toContain('<p>A&#60;script&#62; invites you');
    expect(mail.html).toContain('href="https://x.example/?a=1&#38;b=&#34;2&#34;"');
    expect(mail.html).not.toContain('<script>');
    expect(mail.text).toContain(`Hello <b>Al</b> O'Neil & "Co",`);
    expect(mail.subject).toBe('Invitation from A<script>');
  });
});
