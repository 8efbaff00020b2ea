// A run's result, read on the event loop: one of more items than a request body may hold fails
// the run before it is parsed (the sandbox probe held every tenant for seconds with 380,000).
import { DEFAULT_BODY_ITEM_LIMIT } from '@pal-workflow/server-skeleton';
import { describe, expect, it } from 'vitest';
import { shaped } from './engine.js';
import type { SandboxOutcome } from './job.js';

const ran = (value: unknown): SandboxOutcome =>
  ({
    ok: true,
    value: JSON.stringify(value),
    effects: {},
    logs: [],
    durationMs: 0,
  }) as unknown as SandboxOutcome;

describe('shaped', () => {
  it('refuses a result of more items than a request body may hold, before parsing it', () => {
    let parsed = false;
    const over = shaped(
      ran(Array.from({ length: DEFAULT_BODY_ITEM_LIMIT + 1 }, () => 1)),
      () => (parsed = true),
      'p',
    );
    expect(over).toMatchObject({ ok: false, type: 'WORKFLOW_MEMORY' });
    expect(!over.ok && over.message).toContain(`more than ${DEFAULT_BODY_ITEM_LIMIT} items`);
    expect(parsed).toBe(false);
    const within = shaped(ran(Array.from({ length: 1000 }, () => 1)), (v) => v, 'p');
    expect(within.ok).toBe(true);
  });
});
