// Console area: C1, C3, C4; C2, C5, C7, which run the pal's `console` module; C6, a token to enter it.
import type { Handlers } from '@pal-workflow/server-skeleton';
import { deleteConsoleAccess, grantConsoleAccess } from '../domain/console-access.js';
import { searchPals } from '../domain/pals.js';
import { issueConsoleToken } from '../domain/tokens.js';
import type { AppContext } from '../http/app-context.js';
import { OPERATIONS, runOperation } from '../workflows/operations.js';

type ConsoleHandlers = Pick<
  Handlers<AppContext>,
  | 'listConsolePals'
  | 'runConsolePal'
  | 'grantConsolePalAccess'
  | 'deleteConsolePalAccess'
  | 'executeConsoleWorkflow'
  | 'createConsoleToken'
  | 'runConsoleWorkflow'
>;

export const consoleHandlers: ConsoleHandlers = {
  listConsolePals: ({ search }, ctx) =>
    searchPals(ctx.domain, ctx.enterpriseId, search, { consoleOnly: true }),
  grantConsolePalAccess: ({ params, form }, ctx) =>
    grantConsoleAccess(
      ctx.domain,
      ctx.enterpriseId,
      params.palId,
      form.ssoId,
      form.useEnterpriseProfile ?? false,
    ),
  deleteConsolePalAccess: ({ params, form }, ctx) =>
    deleteConsoleAccess(
      ctx.domain,
      ctx.enterpriseId,
      params.palId,
      form.ssoId,
      form.useEnterpriseProfile ?? false,
    ),
  runConsolePal: ({ params, body }, ctx) =>
    runOperation(ctx.domain, OPERATIONS.runConsolePal, place(ctx, params), body),
  executeConsoleWorkflow: ({ params, body }, ctx) =>
    runOperation(ctx.domain, OPERATIONS.executeConsoleWorkflow, place(ctx, params), body),
  createConsoleToken: ({ params, form }, ctx) =>
    issueConsoleToken(
      ctx.domain,
      ctx.enterpriseId,
      params.palId,
      form.ssoId,
      form.useEnterpriseProfile ?? false,
      form.action,
    ),
  runConsoleWorkflow: ({ params, body }, ctx) =>
    runOperation(ctx.domain, OPERATIONS.runConsoleWorkflow, place(ctx, params), body),
};

function place(ctx: AppContext, params: { palId: string }) {
  const { enterpriseId, requestId } = ctx;
  return { enterpriseId, requestId, palId: params.palId };
}
