// Outgoing mail. With MAIL_URL (smtp:// or smtps://) nodemailer sends each message; without it,
// each message is built the same way (nodemailer's stream transport) and written as one RFC 822
// `.eml` file into DATA_DIR/outbox/, and logged, so a developer can open what would have gone out.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { makeFolder } from '../folders.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Its Message-ID's left part, the same on every attempt to send it; else a random one. */
  id?: string;
}

export interface SentMail {
  messageId: string;
  /** The .eml file, in outbox mode. */
  file?: string;
}

export interface Mailer {
  readonly mode: 'smtp' | 'outbox';
  send(message: MailMessage): Promise<SentMail>;
  close(): void;
}

/** How long an SMTP send waits for the connection, the greeting, and between bytes. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export function createMailer(
  config: Pick<Config, 'mailUrl' | 'mailFrom' | 'dataDir'>,
  log: Logger,
): Mailer {
  return config.mailUrl
    ? smtpMailer(config.mailUrl, config.mailFrom, log)
    : outboxMailer(config, log);
}

function smtpMailer(mailUrl: string, from: string, log: Logger): Mailer {
  // nodemailer reads host, port, credentials and options (e.g. ?ignoreTLS=true) from the URL.
  // Its waits are shortened (from minutes) to end well within the outbox lease (docs/events.md).
  const transport = nodemailer.createTransport({ url: mailUrl, ...SMTP_TIMEOUTS }, { from });
  return {
    mode: 'smtp',
    async send(message) {
      const info = await transport.sendMail(withMessageId(message, from));
      log.info(
        { to: message.to, subject: message.subject, messageId: info.messageId },
        'mail sent',
      );
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}

function outboxMailer(config: Pick<Config, 'mailFrom' | 'dataDir'>, log: Logger): Mailer {
  const outbox = join(config.dataDir, 'outbox');
  const transport = nodemailer.createTransport(
    { streamTransport: true, buffer: true, newline: 'windows' },
    { from: config.mailFrom },
  );
  return {
    mode: 'outbox',
    async send(message) {
      const info = await transport.sendMail(withMessageId(message, config.mailFrom));
      makeFolder(outbox, 0o700);
      // Sortable by time; the random part keeps two mails of one millisecond apart.
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const file = join(outbox, `${stamp}-${randomBytes(4).toString('hex')}.eml`);
      writeFileSync(file, info.message as Buffer, { flag: 'wx', mode: 0o600 });
      log.info(
        { to: message.to, subject: message.subject, messageId: info.messageId, file },
        'mail written to the outbox (no MAIL_URL)',
      );
      return { messageId: info.messageId, file };
    },
    close: () => transport.close(),
  };
}

/**
 * nodemailer's message: `id` becomes the Message-ID `<id@domain of the From address>`, which
 * nodemailer would otherwise make anew on each attempt.
 */
function withMessageId({ id, ...message }: MailMessage, from: string) {
  if (id === undefined) return message;
  const domain = /@([^\s@<>]+)>?\s*$/.exec(from)?.[1] ?? 'pal.invalid';
  return { ...message, messageId: `<${id}@${domain}>` };
}
