// Enterprise area: E1–E6, the SSO identities of the client application's users.
import type { Handlers } from '@pal-workflow/server-skeleton';
import { inviteSso } from '../domain/invitations.js';
import {
  createSso,
  deleteSso,
  getSsoStatus,
  isEmailRegistered,
  updateSso,
} from '../domain/ssos.js';
import type { AppContext } from '../http/app-context.js';

type EnterpriseHandlers = Pick<
  Handlers<AppContext>,
  'createSso' | 'deleteSso' | 'inviteSso' | 'isEmailRegistered' | 'getSsoStatus' | 'updateSso'
>;

export const enterpriseHandlers: EnterpriseHandlers = {
  createSso: ({ form }, ctx) => createSso(ctx.domain, ctx.enterpriseId, form),
  deleteSso: ({ form }, ctx) => deleteSso(ctx.domain, ctx.enterpriseId, form.sso),
  inviteSso: ({ form }, ctx) => inviteSso(ctx.domain, ctx.enterpriseId, form.email),
  isEmailRegistered: ({ query }, ctx) => isEmailRegistered(ctx.domain, query.email),
  getSsoStatus: ({ query }, ctx) => getSsoStatus(ctx.domain, ctx.enterpriseId, query.sso),
  updateSso: ({ form: { sso, ...person } }, ctx) =>
    updateSso(ctx.domain, ctx.enterpriseId, sso, person),
};
