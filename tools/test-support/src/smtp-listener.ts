/**
 * A real SMTP server for tests (smtp-server) on 127.0.0.1, random port, no TLS, no auth. It
 * parses every mail with mailparser and keeps it before acknowledging, so a mail is there as soon
 * as the sender's sendMail resolves. Addresses in `refused` are rejected with 550.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  mail: ParsedMail;
}

export interface SmtpListener {
  port: number;
  /** `smtp://127.0.0.1:PORT`, for MAIL_URL. */
  url: string;
  received: ReceivedMail[];
  /** Lower-case addresses the server refuses at RCPT TO. */
  refused: Set<string>;
  /**
   * Holds back the acknowledgment of every mail until the returned function is called, so that a
   * test can act while deliveries are under way. The mails are kept as they arrive.
   */
  hold(): () => void;
  /** Mails received and not yet acknowledged (held). */
  held(): number;
  close(): Promise<void>;
}

/** `port`: listen on this port (0, the default: any free one), e.g. to come back after a stop. */
export async function startSmtpListener(options: { port?: number } = {}): Promise<SmtpListener> {
  const received: ReceivedMail[] = [];
  const refused = new Set<string>();
  let gate: Promise<void> | undefined;
  let heldCount = 0;
  const acknowledge = (callback: (error?: Error | null) => void) => {
    if (!gate) return callback();
    heldCount += 1;
    void gate.then(() => {
      heldCount -= 1;
      callback();
    });
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!refused.has(address.address.toLowerCase())) return callback();
      callback(Object.assign(new Error('no such mailbox'), { responseCode: 550 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        simpleParser(Buffer.concat(chunks))
          .then((mail) => {
            const from = session.envelope.mailFrom;
            received.push({
              envelope: {
                from: from ? from.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              mail,
            });
            acknowledge(callback);
          })
          .catch(callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    refused,
    hold() {
      let release = () => {};
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    held: () => heldCount,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
