// The sandbox on its own (no worker, no server): the host API's rules, and that runs leave
// nothing behind: 10,000 runs in one QuickJS module, every handle freed (a leaked one makes the
// runtime's disposal fail, which retires the module).
import { beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSWASMModule } from 'quickjs-emscripten';
import { sandboxJob } from '../../test/workflow-runs.js';
import type { SandboxJob } from './job.js';
import { loadSandboxModule, normalizeModuleName, runJob, stackFrames } from './sandbox.js';

let quickjs: QuickJSWASMModule;
beforeAll(async () => {
  quickjs = await loadSandboxModule(64 * 1024 * 1024);
});

const job = sandboxJob;

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
      fields: [],
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
        { transaction: 'workflows/tx.js', lib: 'workflows/lib.js' },
      ),
    ).toEqual([
      { functionName: 'inner', module: 'lib', line: 3 },
      { functionName: 'run', module: 'transaction', line: 12 },
    ]);
  });
});

describe('the bounds on what a run hands to the host (docs/workflows.md)', () => {
  const run = (source: string, over: Partial<SandboxJob> = {}) =>
    runJob(quickjs, job(`export function run(input, pal) { ${source} }`, over));

  it.each([
    [
      'names a run sets',
      'for (let i = 0; i < 1001; i++) pal.vars.set("n" + i, "v")',
      {},
      'pal.vars.set: a run may set at most 1000 variables',
    ],
    [
      'names a scope holds',
      'pal.vars.set("seen", "again"); pal.vars.set("new", "v")',
      { vars: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v'])) },
      'pal.vars.set: the variables of this transaction would hold more than 10000 names',
    ],
    [
      'bytes a scope holds',
      'pal.vars.set("b", "é".repeat(30000))',
      { vars: { a: 'x'.repeat(1_000_000) } },
      'pal.vars.set: the variables of this transaction would take more than 1048576 bytes',
    ],
    [
      'role changes a run makes',
      'for (let i = 0; i < 101; i++) pal.roles.remove("s" + i)',
      {},
      'pal.roles.remove: a run may make at most 100 role changes',
    ],
    [
      'roles a transaction holds',
      'pal.roles.assign("s0", "r0"); pal.roles.assign("new", "r")',
      { roles: Array.from({ length: 1000 }, (_, i) => ({ sso: `s${i}`, role: `r${i}` })) },
      'pal.roles.assign: the transaction would hold more than 1000 roles',
    ],
    [
      'mails a run sends',
      'for (let i = 0; i < 21; i++) pal.mail.send({ to: "s1", subject: "s", text: "t", action: "a" })',
      {},
      'pal.mail.send: a run may send at most 20 mails',
    ],
    [
      'a caught bound',
      'for (let i = 0; i < 2000; i++) try { pal.vars.set("n" + i, "v") } catch {} return "went on"',
      {},
      'pal.vars.set: a run may set at most 1000 variables',
    ],
    [
      'the returned value',
      'return "x".repeat(2000)',
      { maxResultLength: 1000 },
      "the workflow's result is larger than 1000 characters of JSON",
    ],
  ])('%s: the run fails with WORKFLOW_MEMORY naming the bound', (_what, source, over, message) => {
    const outcome = run(source, over);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect([outcome.type, outcome.message]).toEqual(['WORKFLOW_MEMORY', message]);
  });

  it('a value as large as allowed, in a scope within its bounds, is kept', () => {
    const outcome = run('pal.vars.set("big", "x".repeat(65536)); pal.roles.assign("s2", "r")', {
      vars: Object.fromEntries(Array.from({ length: 9_998 }, (_, i) => [`k${i}`, 'v'])),
    });
    expect(outcome.ok).toBe(true);
  });

  it('a huge string argument is refused without being copied whole', () => {
    const outcome = run(
      'try { pal.vars.set("n", "x".repeat(5_000_000)); } catch (e) { return e.message; }',
    );
    expect(outcome.ok && JSON.parse(outcome.valueJson!)).toBe(
      'pal.vars.set: value is longer than 65536 characters',
    );
  });

  it.each([
    [
      'throw new Error("x".repeat(3_000_000))',
      /^Error: x{2000}… \(cut to 2000 of 3000000 characters\)$/,
    ],
    ['const e = new Error("m"); e.name = "N".repeat(500); throw e', /^N{100}…: m$/],
    ['throw "y".repeat(10_000)', /^thrown value: y{2000}… \(cut to 2000 of 10000 characters\)$/],
    ['throw { message: "z".repeat(5000) }', /^Error: z{2000}… \(cut to 2000 of 5000 characters\)$/],
  ])('%s: the message is cut to the documented length', (source, message) => {
    const outcome = run(source);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.type).toBe('WORKFLOW_ERROR');
    expect(outcome.message).toMatch(message);
  });
});
