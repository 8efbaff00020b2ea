// pal.mail.send (docs/workflows.md): the recipients are checked inside the run's database
// transaction (an unknown or deleted SSO fails the run, and nothing is kept), and the mails are
// written to the outbox in that same transaction: the dispatcher sends them once it has committed,
// retrying until the mail server takes them (docs/events.md). Each holds the link of
// docs/decisions.md "Links in mails" that enters the transaction as the recipient and runs the
// named action.
import type { DomainContext } from '../domain/context.js';
import { ConflictError } from '../domain/errors.js';
import { createMailLink } from '../domain/mail-links.js';
import { queueMail } from '../domain/queued-mail.js';
import { getSso } from '../domain/ssos.js';
import type { TransactionDetails } from '../domain/transactions.js';
import type { RunEffects } from './job.js';

export interface WorkflowMail {
  sso: string;
  email: string;
  name: string;
  subject: string;
  text: string;
  action: string;
}

export async function checkMailRecipients(
  ctx: DomainContext,
  enterpriseId: string,
  mails: RunEffects['mails'],
): Promise<WorkflowMail[]> {
  const checked: WorkflowMail[] = [];
  for (const mail of mails) {
    const sso = await getSso(ctx, enterpriseId, mail.to);
    if (sso.status === 'DELETED')
      throw new ConflictError(`pal.mail.send: SSO "${mail.to}" is deleted`);
    checked.push({
      sso: sso.id,
      email: sso.email,
      name: `${sso.firstName} ${sso.lastName}`.trim(),
      subject: mail.subject,
      text: mail.text,
      action: mail.action,
    });
  }
  return checked;
}

/** Writes the run's mails to the outbox; call it inside the run's database transaction. */
export async function queueWorkflowMails(
  ctx: DomainContext,
  transaction: TransactionDetails,
  mails: WorkflowMail[],
): Promise<void> {
  for (const mail of mails) {
    const link = createMailLink(
      ctx.config,
      {
        enterpriseId: transaction.enterpriseId,
        transactionId: transaction.id,
        recipientSso: mail.sso,
        action: mail.action,
      },
      ctx.now(),
    );
    await queueMail(ctx, transaction.enterpriseId, {
      to: mail.email,
      subject: mail.subject,
      text: `${mail.text}\n\n${link}\n`,
    });
  }
}
