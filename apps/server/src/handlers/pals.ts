// Pals area: P1, P2 (P3 comes with tokens).
import type { Handlers } from '@pal-workflow/server-skeleton';
import { getPal, searchPals } from '../domain/pals.js';
import type { AppContext } from '../http/app-context.js';
import { notImplemented } from './not-implemented.js';

type PalHandlers = Pick<Handlers<AppContext>, 'searchPals' | 'getPal' | 'createPalToken'>;

export const palHandlers: PalHandlers = {
  searchPals: ({ search }, ctx) => searchPals(ctx.domain, ctx.enterpriseId, search),
  getPal: ({ params }, ctx) => getPal(ctx.domain, ctx.enterpriseId, params.id, 'id'),
  createPalToken: async () => notImplemented('P3', 'issues or redeems a token'),
};
