// Console area: C1, C3, C4 (C2, C5, C6, C7 come with workflows and tokens).
import type { Handlers } from '@pal-workflow/server-skeleton';
import { deleteConsoleAccess, grantConsoleAccess } from '../domain/people.js';
import { searchPals } from '../domain/pals.js';
import type { AppContext } from '../http/app-context.js';
import { notImplemented } from './not-implemented.js';

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
  runConsolePal: async () => notImplemented('C2', 'runs a workflow'),
  executeConsoleWorkflow: async () => notImplemented('C5', 'runs a workflow'),
  createConsoleToken: async () => notImplemented('C6', 'issues or redeems a token'),
  runConsoleWorkflow: async () => notImplemented('C7', 'runs a workflow'),
};
