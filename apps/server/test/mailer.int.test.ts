// The mailer against a real SMTP listener on loopback, and its outbox mode on a real folder.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { simpleParser, type AddressObject } from 'mailparser';
import { pino } from 'pino';
import { startSmtpListener, type SmtpListener } from '@pal-workflow/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, testConfig, testContext } from './helpers.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { GoneError } from '../src/domain/errors.js';
import { acceptInvitation, describeInvitation, inviteSso } from '../src/domain/invitations.js';
import { createSso, getSsoStatus } from '../src/domain/ssos.js';
import { createMailer } from '../src/mail/mailer.js';
import { deliverDueMessages } from '../src/outbox/dispatcher.js';

describe('mail over SMTP', () => {
  let smtp: SmtpListener;
  beforeAll(async () => {
    smtp = await startSmtpListener();
  });
  afterAll(() => smtp.close());

  it('delivers the E3 invitation; its link is confirmed to ACTIVE, and only once', async () => {
    const t = await testContext({
      MAIL_URL: smtp.url,
      MAIL_FROM: 'Pal Workflow <pal@acme.test>',
      PUBLIC_URL: 'http://pal.acme.test:8080',
    });
    try {
      expect(t.ctx.mailer.mode).toBe('smtp');
      const acme = (await createEnterprise(t.ctx, 'Acme')).id;
      const globex = (await createEnterprise(t.ctx, 'Globex')).id;
      await createSso(t.ctx, acme, {
        firstName: 'Dana',
        lastName: 'Scully',
        email: 'dana@fbi.test',
      });
      const sso = await inviteSso(t.ctx, globex, 'DANA@fbi.test');
      // Queued with the invitation; a dispatcher sends it (the server runs one per node).
      expect(smtp.received).toHaveLength(0);
      await deliverDueMessages(t.ctx);

      expect(smtp.received).toHaveLength(1);
      const [{ envelope, mail }] = smtp.received;
      expect(envelope).toEqual({ from: 'pal@acme.test', to: ['dana@fbi.test'] });
      expect((mail.to as AddressObject).value[0].address).toBe('dana@fbi.test');
      expect(mail.subject).toBe('Invitation from Globex');
      expect(mail.text).toContain('Hello Dana Scully,');
      const link = /http:\/\/pal\.acme\.test:8080\/services\/invitations\/([A-Za-z0-9_-]{43})/.exec(
        mail.text!,
      );
      expect(link).not.toBeNull();
      expect(mail.html).toContain(link![0]);
      // No local outbox in SMTP mode.
      expect(() => readdirSync(join(t.dir, 'outbox'))).toThrow();

      const token = link![1];
      expect((await describeInvitation(t.ctx, token)).enterpriseName).toBe('Globex');
      expect(await getSsoStatus(t.ctx, globex, sso)).toBe('PENDING_ACTIVATION');
      expect((await acceptInvitation(t.ctx, token)).ssoId).toBe(sso);
      expect(await getSsoStatus(t.ctx, globex, sso)).toBe('ACTIVE');
      await expect(acceptInvitation(t.ctx, token)).rejects.toThrow(GoneError);
    } finally {
      await t.close();
    }
  });
});

describe('mail without MAIL_URL', () => {
  const dir = tempDir('pal-outbox-');
  afterAll(() => dir.remove());

  it('writes each message as one parseable RFC 822 .eml file into DATA_DIR/outbox', async () => {
    const config = testConfig(dir.path);
    const mailer = createMailer(config, pino({ level: 'silent' }));
    expect(mailer.mode).toBe('outbox');
    const first = await mailer.send({
      to: 'ops@example.com',
      subject: 'Hello',
      text: 'Body ünïcode',
    });
    const second = await mailer.send({
      to: 'ops@example.com',
      subject: 'Again',
      text: 'Second',
      html: '<p>Second</p>',
    });
    mailer.close();

    const files = readdirSync(join(dir.path, 'outbox')).sort();
    expect(files).toHaveLength(2);
    expect(files.every((f) => f.endsWith('.eml'))).toBe(true);
    expect(first.file).toBe(join(dir.path, 'outbox', files[0]));
    expect(statSync(first.file!).mode & 0o777).toBe(0o600);

    const raw = readFileSync(first.file!);
    expect(raw.toString('latin1')).toMatch(/^[\x21-\x7e]+: /); // starts with a header line
    const mail = await simpleParser(raw);
    expect(mail.subject).toBe('Hello');
    expect(mail.text?.trim()).toBe('Body ünïcode');
    expect((mail.to as AddressObject).value[0].address).toBe('ops@example.com');
    expect((mail.from as AddressObject).value[0].address).toBe('no-reply@localhost');
    expect(mail.messageId).toBe(first.messageId);
    expect((await simpleParser(readFileSync(second.file!))).html).toContain('<p>Second</p>');
  });
});
