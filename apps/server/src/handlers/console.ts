// Console area: C1, C3, C4; C2, C5, C7, which run the pal's `console` module; C6, a token to enter it.
import type { Handlers } from '@pal-workflow/server-skeleton';
import { deleteConsoleAccess, grantConsoleAccess } from '../domain/console-access.js';
import { searchPals } from '../domain/pals.js';
import { issueConsoleToken } from '../domain/tokens.js';
import type { AppContext } from '../http/app-context.js';
import { runConsoleModule } from '../workflows/engine.js';
import { consoleResult, nameValues } from '../workflows/output.js';
import { contentInput } from '../workflows/input.js';
import { failureMessages, valueOr422 } from './workflow-runs.js';

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
  runConsolePal: async ({ params, body }, ctx) =>
    valueOr422(
      await runConsoleModule(ctx.domain, ctx.enterpriseId, params.palId, {
        exportName: 'run',
        input: contentInput(body, { action: 'run', palId: params.palId }),
        shape: nameValues,
        requestId: ctx.requestId,
      }),
    ),
  executeConsoleWorkflow: async ({ params, body }, ctx) => {
    const result = await runConsoleModule(ctx.domain, ctx.enterpriseId, params.palId, {
      exportName: 'executeWorkflow',
      input: { body: body.text, contentType: body.contentType },
      shape: (value) => consoleResult(value, params.palId),
      requestId: ctx.requestId,
    });
    return result.ok
      ? result.value
      : { success: false, palId: params.palId, messages: failureMessages(result) };
  },
  createConsoleToken: ({ params, form }, ctx) =>
    issueConsoleToken(
      ctx.domain,
      ctx.enterpriseId,
      params.palId,
      form.ssoId,
      form.useEnterpriseProfile ?? false,
      form.action,
    ),
  runConsoleWorkflow: async ({ params, body }, ctx) => {
    const result = await runConsoleModule(ctx.domain, ctx.enterpriseId, params.palId, {
      exportName: 'runWorkflow',
      input: contentInput(body, { action: 'runWorkflow', palId: params.palId }),
      shape: (value) => consoleResult(value, params.palId),
      requestId: ctx.requestId,
    });
    return result.ok
      ? result.value
      : { success: false, palId: params.palId, messages: failureMessages(result) };
  },
};
