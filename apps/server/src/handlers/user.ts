// User area: U1 runs the `user` module of the pal named by `workflow`, export `action`
// (docs/workflows.md).
import type { Handlers } from '@pal-workflow/server-skeleton';
import { InvalidArgumentError } from '../domain/errors.js';
import type { AppContext } from '../http/app-context.js';
import { OPERATIONS, runOperation } from '../workflows/operations.js';

export const userHandlers: Pick<Handlers<AppContext>, 'runUserWorkflow'> = {
  runUserWorkflow: async ({ query, body }, ctx) => {
    const workflow = required(
      'workflow',
      query.workflow,
      'the id of the pal whose user module runs',
    );
    const action = required('action', query.action, 'the export of the user module to run');
    const { enterpriseId, requestId } = ctx;
    return runOperation(
      ctx.domain,
      OPERATIONS.runUserWorkflow,
      { enterpriseId, requestId, palId: workflow },
      body,
      action,
    );
  },
};

function required(name: string, value: string | undefined, what: string): string {
  if (value === undefined || value === '')
    throw new InvalidArgumentError(`${name}: required (${what})`);
  return value;
}
