// Operations that run workflows (C2, C5, C7, T6, T9, U1) or issue tokens (C6, T5, T8, P3, T3)
// arrive in later issues. Until then they answer 501 with an errorResult that says so.
import { HttpError } from '@pal-workflow/server-skeleton';

export function notImplemented(
  specId: string,
  what: 'runs a workflow' | 'issues or redeems a token',
): never {
  throw new HttpError(
    501,
    'NOT_IMPLEMENTED',
    `${specId} ${what}, which this version of the service does not implement yet`,
  );
}
