// pal.mail.send (docs/workflows.md): the recipients are checked inside the run's database
// transaction (an unknown SSO, or one that is not ACTIVE, fails the run, and nothing is kept), the
// mails are counted against the enterprise's hourly quota there too, and written to the outbox in
// that same transaction: the dispatcher sends them once it has committed, retrying until the mail
// server takes them (docs/events.md). Each holds the link of docs/entry.md that enters the
// transaction as the recipient and runs the named action.
import type { DomainContext } from '../domain/context.js';
import { ConflictError } from '../domain/errors.js';
import { createMailLink } from '../domain/mail-links.js';
import { queueMail } from '../domain/queued-mail.js';
import { getSso } from '../domain/ssos.js';
import type { TransactionDetails } from '../domain/transactions.js';
import { addWorkflowMails } from '../storage/workflow-mail-counts.js';
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
    // A PENDING_ACTIVATION SSO is someone who accepted nothing yet (maybe another enterprise's
    // person, invited by this one): no mail of a workflow until they do.
    if (sso.status !== 'ACTIVE')
      throw new ConflictError(
        `pal.mail.send: SSO "${mail.to}" is ${sso.status}; mail goes only to ACTIVE SSOs`,
      );
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

const HOUR_MS = 3_600_000;

/**
 * Counts a run's mails against the enterprise's WORKFLOW_MAILS_PER_HOUR, on every node alike;
 * over it the run fails (a ConflictError, which rolls the count back with the rest).
 */
export async function countWorkflowMails(
  ctx: DomainContext,
  enterpriseId: string,
  count: number,
): Promise<void> {
  if (count === 0) return;
  const quota = ctx.config.workflowMailsPerHour;
  const hour = Math.floor(ctx.now().getTime() / HOUR_MS) * HOUR_MS;
  const sent = await addWorkflowMails(ctx.db, enterpriseId, new Date(hour).toISOString(), count);
  if (sent > quota)
    throw new ConflictError(
      `pal.mail.send: the enterprise's quota of ${quota} workflow mails an hour is used up (${sent - count} sent this hour, this run would send ${count}); more can be sent from ${new Date(hour + HOUR_MS).toISOString()}`,
    );
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
