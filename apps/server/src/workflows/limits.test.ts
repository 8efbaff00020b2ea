import { describe, expect, it } from 'vitest';
import { breakdown, limitMessage } from './limits.js';

const job = { timeoutMs: 1000, memoryBytes: 64 * 1048576 };

describe('breakdown: one reading of a sandbox that broke down, for sandbox.ts and pool.ts', () => {
  it.each([
    // What a trapped WASM module throws (sandbox.ts).
    ['RuntimeError: memory access out of bounds', 'WORKFLOW_MEMORY'],
    ['Aborted(OOM)', 'WORKFLOW_MEMORY'],
    ['abort(Assertion failed)', 'WORKFLOW_MEMORY'],
    // What Node says of a worker that outgrew its heap (pool.ts, ERR_WORKER_OUT_OF_MEMORY).
    ['Worker terminated due to reaching memory limit: JS heap out of memory', 'WORKFLOW_MEMORY'],
    ['the worker exited with code 1', 'WORKFLOW_ERROR'],
    ['Cannot read properties of undefined', 'WORKFLOW_ERROR'],
  ])('%s → %s', (cause, type) => {
    const failure = breakdown(job, cause);
    expect(failure.type).toBe(type);
    expect(failure.message).toBe(
      type === 'WORKFLOW_MEMORY'
        ? 'the workflow used more than 64 MB of memory'
        : `the sandbox failed: ${cause}`,
    );
  });

  it('names the limit a run broke', () => {
    expect(limitMessage('WORKFLOW_TIMEOUT', job)).toBe('the workflow ran longer than 1000 ms');
    expect(limitMessage('WORKFLOW_MEMORY', job)).toBe(
      'the workflow used more than 64 MB of memory',
    );
  });
});
