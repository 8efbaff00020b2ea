// Transactions area: T1, T2, T4, T7, T10; T6, T9, which run the transaction's `transaction`
// module; T3, which resolves a link a workflow mailed; T5, T8, tokens to enter a transaction.
import type { Handlers } from '@pal-workflow/server-skeleton';
import { resolveMailLink } from '../domain/mail-links.js';
import { removeAllRoles, removeRole } from '../domain/transaction-roles.js';
import { issueTransactionToken } from '../domain/tokens.js';
import { createTransaction, getTransaction, searchTransactions } from '../domain/transactions.js';
import type { AppContext } from '../http/app-context.js';
import { OPERATIONS, runOperation } from '../workflows/operations.js';

type TransactionHandlers = Pick<
  Handlers<AppContext>,
  | 'createTransaction'
  | 'searchTransactions'
  | 'getTransactionFromEmail'
  | 'removeAllRoles'
  | 'createTransactionToken'
  | 'runTransactionWorkflow'
  | 'removeTransactionRole'
  | 'createAnonymousToken'
  | 'runTransaction'
  | 'getTransaction'
>;

export const transactionHandlers: TransactionHandlers = {
  createTransaction: async ({ form }, ctx) =>
    (await createTransaction(ctx.domain, ctx.enterpriseId, form.palId)).id,
  searchTransactions: ({ search }, ctx) => searchTransactions(ctx.domain, ctx.enterpriseId, search),
  getTransaction: ({ params }, ctx) => getTransaction(ctx.domain, ctx.enterpriseId, params.id),
  removeAllRoles: ({ form }, ctx) => removeAllRoles(ctx.domain, ctx.enterpriseId, form.userSSO),
  removeTransactionRole: ({ params, form }, ctx) =>
    removeRole(ctx.domain, ctx.enterpriseId, params.transactionId, form.userSSO),
  getTransactionFromEmail: ({ query }, ctx) =>
    resolveMailLink(ctx.domain, ctx.enterpriseId, query.encryptedToken, query.encryptedAction),
  createTransactionToken: ({ params, form }, ctx) =>
    issueTransactionToken(
      ctx.domain,
      ctx.enterpriseId,
      params.transactionId,
      form.userSSO,
      'participant',
    ),
  runTransactionWorkflow: ({ params, body }, ctx) =>
    runOperation(ctx.domain, OPERATIONS.runTransactionWorkflow, place(ctx, params), body),
  createAnonymousToken: ({ params, form }, ctx) =>
    issueTransactionToken(
      ctx.domain,
      ctx.enterpriseId,
      params.transactionId,
      form.userSSO,
      'anonymous',
      form.action,
    ),
  runTransaction: ({ params, body }, ctx) =>
    runOperation(ctx.domain, OPERATIONS.runTransaction, place(ctx, params), body),
};

function place(ctx: AppContext, params: { transactionId: string }) {
  const { enterpriseId, requestId } = ctx;
  return { enterpriseId, requestId, transactionId: params.transactionId };
}
