// pal.mail.send (DESIGN §7): the recipients are checked inside the run's database transaction
// (an unknown or deleted SSO fails the run, and nothing is kept); the mails go out once it has
// committed. Each holds the link of DESIGN §6 that enters the transaction as the recipient and
// runs the named action.
import type { DomainContext } from '../domain/context.js';
import { ConflictError } from '../domain/errors.js';
import { createMailLink } from '../domain/mail-links.js';
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

/** Sends after the commit; a mail that cannot be sent is logged, the run stays done. */
export async function sendWorkflowMails(
  ctx: DomainContext,
  transaction: TransactionDetails,
  mails: WorkflowMail[],
  requestId: string | undefined,
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
    try {
      await ctx.mailer.send({
        to: mail.email,
        subject: mail.subject,
        text: `${mail.text}\n\n${link}\n`,
      });
    } catch (error) {
      ctx.log.error(
        { err: error, reqId: requestId, transactionId: transaction.id, sso: mail.sso },
        'a workflow mail could not be sent',
      );
    }
  }
}
