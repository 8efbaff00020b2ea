// The sandbox on its own (no worker, no server): the host API's rules, and that runs leave
// nothing behind: 10,000 runs in one QuickJS module, every handle freed (a leaked one makes the
// runtime's disposal fail, which retires the module).
import { beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { TRANSACTION_EVENTS } from '../domain/transaction-lifecycle.js';
import type { SandboxJob } from './job.js';
import { loadSandboxModule, normalizeModuleName, runJob, stackFrames } from './sandbox.js';

let quickjs: QuickJSWASMModule;
beforeAll(async () => {
  quickjs = await loadSandboxModule(64 * 1024 * 1024);
});

function job(source: string, over: Partial<SandboxJob> = {}): SandboxJob {
  return {
    files: { 'workflows/tx.js': source },
    modules: { transaction: 'workflows/tx.js' },
    module: 'transaction',
    exportName: 'run',
    inputJson: '{}',
    vars: { seen: 'before' },
    transaction: {
      id: 't1',
      palId: 'p',
      status: 'NEW',
      systemStatus: 'OPEN',
      webServiceStatus: 'RUNNING',
    },
    roles: [{ sso: 's1', role: 'owner' }],
    moves: { complete: TRANSACTION_EVENTS.complete, cancel: TRANSACTION_EVENTS.cancel },
    timeoutMs: 1000,
    memoryBytes: 64 * 1024 * 1024,
    maxResultLength: 1 << 20,
    ...over,
  };
}

describe('the sandbox', () => {
  it('runs 10,000 times in one module and frees everything each time', () => {
    const trivial = job(
      'export function run(input, pal) { pal.vars.set("n", input.n); return { n: input.n }; }',
    );
    for (let i = 0; i < 10_000; i++) {
      const outcome = runJob(quickjs, { ...trivial, inputJson: `{"n":${i}}` });
      if (!outcome.ok) throw new Error(`run ${i}: ${outcome.message}`);
      if (outcome.valueJson !== `{"n":${i}}`) throw new Error(`run ${i}: ${outcome.valueJson}`);
    }
  });

  it('collects effects without applying them, and the run sees its own writes', () => {
    const outcome = runJob(
      quickjs,
      job(`export function run(input, pal) {
        pal.vars.set('count', 3);
        pal.vars.set('flag', true);
        pal.transaction.setStatus('SUBMITTED');
        pal.transaction.complete();
        pal.roles.assign('s2', 'approver');
        pal.roles.remove('s1');
        pal.mail.send({ to: 's2', subject: 'Hi', text: 'Body', action: 'approve' });
        pal.log('a', { b: 1 }, 2);
        return { vars: pal.vars.all(), status: pal.transaction.status, system: pal.transaction.systemStatus, roles: pal.roles.list() };
      }`),
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(JSON.parse(outcome.valueJson!)).toEqual({
      vars: { seen: 'before', count: '3', flag: 'true' },
      status: 'SUBMITTED',
      system: 'COMPLETED',
      roles: [{ sso: 's2', role: 'approver' }],
    });
    expect(outcome.effects).toEqual({
      vars: { count: '3', flag: 'true' },
      status: 'SUBMITTED',
      moves: ['complete'],
      roles: [
        { op: 'assign', sso: 's2', role: 'approver' },
        { op: 'remove', sso: 's1' },
      ],
      mails: [{ to: 's2', subject: 'Hi', text: 'Body', action: 'approve' }],
    });
    expect(outcome.logs).toEqual(['a {"b":1} 2']);
  });

  it.each([
    ['pal.vars.set("x", {})', /pal.vars.set: value must be a string/],
    ['pal.vars.set("", "v")', /pal.vars.set: name must not be empty/],
    ['pal.transaction.setStatus("x".repeat(65))', /longer than 64 characters/],
    [
      'pal.transaction.cancel(); pal.transaction.complete()',
      /cannot complete a transaction whose systemStatus is CANCELLED/,
    ],
    ['pal.mail.send({ to: "s" })', /pal.mail.send: subject must be a string/],
    ['pal.roles.assign("s", 5)', /pal.roles.assign: role must be a string/],
  ])('%s throws a TypeError the workflow may catch', (code, message) => {
    const outcome = runJob(
      quickjs,
      job(
        `export function run(input, pal) { try { ${code}; return 'no error'; } catch (e) { return e.name + ': ' + e.message; } }`,
      ),
    );
    expect(outcome.ok).toBe(true);
    expect(outcome.ok && JSON.parse(outcome.valueJson!)).toMatch(message);
  });

  it('console runs have no transaction, roles or mail', () => {
    const outcome = runJob(
      quickjs,
      job(
        'export function run(input, pal) { return [typeof pal.transaction, (() => { try { pal.roles.list(); } catch (e) { return e.message; } })()]; }',
        {
          transaction: undefined,
        },
      ),
    );
    expect(outcome.ok && JSON.parse(outcome.valueJson!)).toEqual([
      'undefined',
      'pal.roles.list is only available in transaction runs',
    ]);
  });

  it('resolves relative imports inside the pal and reports frames of its files only', () => {
    expect(normalizeModuleName('workflows/a/tx.js', '../lib.js')).toBe('workflows/lib.js');
    expect(normalizeModuleName('workflows/tx.js', './lib.js')).toBe('workflows/lib.js');
    expect(normalizeModuleName('workflows/tx.js', 'fs')).toBe('fs');
    expect(
      stackFrames(
        '    at inner (workflows/lib.js:3:9)\n    at run (workflows/tx.js:12)\n    at <anonymous> (pal:driver:1:1)\n',
      ),
    ).toEqual([
      { functionName: 'inner', file: 'workflows/lib.js', line: 3 },
      { functionName: 'run', file: 'workflows/tx.js', line: 12 },
    ]);
  });
});
