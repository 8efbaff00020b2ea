// Mails go out through the outbox (docs/events.md): written, sealed, in the transaction of the
// change that causes them, and sent by the dispatcher after commit. Sealed because a mail may
// carry what the database must not hold in clear (an invitation's single-use token); a delivered
// mail's content is erased.
import type { MailMessage } from '../mail/mailer.js';
import { insertOutboxMessages } from '../storage/outbox-messages.js';
import type { DomainContext } from './context.js';
import { newMessageId } from './events.js';
import { seal, sealingKey, unseal } from './sealing.js';

const PURPOSE = 'outbox-mail-aes-256-gcm';

/** Writes the mail to the outbox; call it inside the change's transaction. */
export async function queueMail(
  ctx: DomainContext,
  enterpriseId: string | null,
  message: MailMessage,
): Promise<void> {
  const id = newMessageId();
  const payload = seal(
    sealingKey(ctx.config.secretKey, PURPOSE),
    JSON.stringify(message),
    Buffer.from(id),
  );
  await insertOutboxMessages(
    ctx.db,
    [{ id, kind: 'mail', enterpriseId, payload }],
    ctx.now().toISOString(),
  );
}

/** The mail of an outbox message; undefined when it does not open (another server key). */
export function openQueuedMail(
  secretKey: Buffer,
  id: string,
  payload: string,
): MailMessage | undefined {
  const text = unseal(sealingKey(secretKey, PURPOSE), payload, Buffer.from(id));
  return text === undefined ? undefined : (JSON.parse(text) as MailMessage);
}
