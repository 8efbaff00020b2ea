// The input a workflow run gets from a console or transaction body (docs/workflows.md, "Input"),
// shared by the handlers and by `pal run`.
import type * as Wire from '@pal-workflow/types';

type Content = Wire.ConsoleContent | Wire.TransactionContent;

/** The body in its JSON wire form, plus `values` (postData by name, the last value winning). */
export function contentInput(
  body: Content | undefined,
  extra: { action: string; palId?: string; transactionId?: string; sso?: string },
): Record<string, unknown> {
  const values = Object.fromEntries(
    (body?.postData ?? [])
      .filter((pair) => pair.name !== undefined)
      .map((pair) => [pair.name!, pair.value ?? '']),
  );
  return { ...body, values, ...withoutUndefined(extra) };
}

function withoutUndefined(object: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(object).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
