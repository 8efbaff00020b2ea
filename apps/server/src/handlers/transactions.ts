// Transactions area: T1, T2, T4, T7, T10 (T3, T5, T6, T8, T9 come with workflows and tokens).
import type { Handlers } from '@pal-workflow/server-skeleton';
import { removeAllRoles, removeRole } from '../domain/people.js';
import { createTransaction, getTransaction, searchTransactions } from '../domain/transactions.js';
import type { AppContext } from '../http/app-context.js';
import { notImplemented } from './not-implemented.js';

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
  getTransactionFromEmail: async () => notImplemented('T3', 'issues or redeems a token'),
  createTransactionToken: async () => notImplemented('T5', 'issues or redeems a token'),
  runTransactionWorkflow: async () => notImplemented('T6', 'runs a workflow'),
  createAnonymousToken: async () => notImplemented('T8', 'issues or redeems a token'),
  runTransaction: async () => notImplemented('T9', 'runs a workflow'),
};
