// What the workflow operations share: the input a run gets (DESIGN §7 "Input") and the answer a
// failed run gives (§7 "Failure": a result with success=false, or 422 for the list operations).
import type * as Wire from '@pal-workflow/types';
import { WorkflowFailedError } from '../domain/errors.js';
import type { RunResult } from '../workflows/engine.js';

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

type Failed = Extract<RunResult<unknown>, { ok: false }>;

export function failureMessages(failure: Failed): Wire.Message[] {
  return [{ message: failure.message, type: failure.type }];
}

/** C2, T9: the value, or 422 with the failure's type. */
export function valueOr422<T>(result: RunResult<T>): T {
  if (result.ok) return result.value;
  throw new WorkflowFailedError(result.type, result.message);
}
