// User area: U1 runs the enterprise's default user workflow (comes with workflows).
import type { Handlers } from '@pal-workflow/server-skeleton';
import type { AppContext } from '../http/app-context.js';
import { notImplemented } from './not-implemented.js';

export const userHandlers: Pick<Handlers<AppContext>, 'runUserWorkflow'> = {
  runUserWorkflow: async () => notImplemented('U1', 'runs a workflow'),
};
