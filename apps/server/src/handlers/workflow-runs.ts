// What the workflow operations share: the answer a failed run gives (docs/workflows.md, "When a
// run fails": a result with success=false, or 422 for the list operations).
import type * as Wire from '@pal-workflow/types';
import { WorkflowFailedError } from '../domain/errors.js';
import type { RunResult } from '../workflows/engine.js';

type Failed = Extract<RunResult<unknown>, { ok: false }>;

export function failureMessages(failure: Failed): Wire.Message[] {
  return [{ message: failure.message, type: failure.type }];
}

/** C2, T9: the value, or 422 with the failure's type. */
export function valueOr422<T>(result: RunResult<T>): T {
  if (result.ok) return result.value;
  throw new WorkflowFailedError(result.type, result.message);
}
