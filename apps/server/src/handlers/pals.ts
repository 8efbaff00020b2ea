// Pals area: P1, P2, and P3: a token (as its entry URL) to enter a new transaction of a pal.
import type { Handlers } from '@pal-workflow/server-skeleton';
import { getPal, searchPals } from '../domain/pals.js';
import type { AppContext } from '../http/app-context.js';
import { issuePalToken } from '../domain/tokens.js';

type PalHandlers = Pick<Handlers<AppContext>, 'searchPals' | 'getPal' | 'createPalToken'>;

export const palHandlers: PalHandlers = {
  searchPals: ({ search }, ctx) => searchPals(ctx.domain, ctx.enterpriseId, search),
  getPal: ({ params }, ctx) => getPal(ctx.domain, ctx.enterpriseId, params.id, 'id'),
  createPalToken: ({ params, form }, ctx) =>
    issuePalToken(ctx.domain, ctx.enterpriseId, params.palId, form.userSSO),
};
