// Every operation's handler. `satisfies Handlers<AppContext>` turns a schema change into a
// compile error at exactly the handler that must change, and a missing handler into one here.
import type { Handlers } from '@pal-workflow/server-skeleton';
import type { AppContext } from '../http/app-context.js';
import { consoleHandlers } from './console.js';
import { enterpriseHandlers } from './enterprise.js';
import { palHandlers } from './pals.js';
import { transactionHandlers } from './transactions.js';
import { userHandlers } from './user.js';

export const handlers = {
  ...consoleHandlers,
  ...transactionHandlers,
  ...userHandlers,
  ...enterpriseHandlers,
  ...palHandlers,
} satisfies Handlers<AppContext>;
