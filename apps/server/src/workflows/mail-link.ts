// INTERIM (replaced by the entry work's domain/mail-links.ts at its merge): the link of a
// workflow mail, `{PUBLIC_URL}/{service_root}/mail?encryptedToken=…&encryptedAction=…`.
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import type { DomainContext } from '../domain/context.js';

const SEVEN_DAYS_MS = 7 * 86_400_000;

export function workflowMailLink(
  ctx: DomainContext,
  link: { enterpriseId: string; transactionId: string; recipientSso: string; action: string },
): string {
  const key = createHash('sha256').update(ctx.config.secretKey).update('mail-link').digest();
  const seal = (text: string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  };
  const token = seal(
    JSON.stringify({
      e: link.enterpriseId,
      t: link.transactionId,
      s: link.recipientSso,
      x: ctx.now().getTime() + SEVEN_DAYS_MS,
    }),
  );
  const query = new URLSearchParams({ encryptedToken: token, encryptedAction: seal(link.action) });
  return `${ctx.config.publicUrl}/${ctx.config.serviceRoot}/mail?${query}`;
}
