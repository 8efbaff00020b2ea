// The sandbox on its own (no worker, no server): the host API's rules, and that runs leave
// nothing behind: every run starts from the sandbox's built state, whatever the run before did.
import { beforeAll, describe, expect, it } from 'vitest';
import { sandboxJob } from '../../test/workflow-runs.js';
import { CONFIG_DEFAULTS } from '../config.js';
import { codeKeyOf, type SandboxJob } from './job.js';
import { importablePaths, normalizeModuleName, Sandbox, stackFrames } from './sandbox.js';

const CODE_CACHE_BYTES = CONFIG_DEFAULTS.WORKFLOW_CODE_CACHE_MB * 1024 * 1024;

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
});
/** Whether runs name their code (SandboxJob.codeKey), as the engine's do: each test runs both ways. */
let keyed = false;
const runJob = (job: SandboxJob) =>
  sandbox.runJob(keyed ? { ...job, codeKey: codeKeyOf('e', job.files) } : job);

const job = sandboxJob;

describe.each([
  ['compiling what each run imports', false],
  ['starting from the modules of its version, compiled', true],
])('runs %s', (_, keep) => {
  beforeAll(() => {
    keyed = keep;
  });

  describe('the sandbox', () => {
    it('runs 10,000 times in one sandbox, its memory no larger after them', () => {
      const trivial = job(
        'export function run(input, pal) { pal.vars.set("n", input.n); return { n: input.n }; }',
      );
      runJob(trivial);
      const memoryBytes = sandbox.memoryBytes;
      for (let i = 0; i < 10_000; i++) {
        const outcome = runJob({ ...trivial, inputJson: `{"n":${i}}` });
        if (!outcome.ok) throw new Error(`run ${i}: ${outcome.message}`);
        if (outcome.value !== `{"n":${i}}`) throw new Error(`run ${i}: ${outcome.value}`);
      }
      expect(sandbox.memoryBytes).toBe(memoryBytes);
    });

    it('starts every run from the built state: nothing one run leaves is seen by the next', () => {
      const files = {
        'workflows/tx.js': `
        import { bump } from './counter.js';
        export function leave(input, pal) {
          globalThis.leftover = 'run 1';
          Array.prototype.map = null;
          JSON.stringify = () => '"forged"';
          String.prototype.slice = () => '0';
          globalThis.parseInt = () => 0;
          Function.prototype.call = () => 0;
          Object.prototype.polluted = true;
          delete Math.floor;
          Promise.resolve().then(() => { globalThis.late = 'job of run 1'; });
          new Promise(() => {});
          return [bump(), Math.random(), Math.random()];
        }
        export function look(input, pal) {
          return [bump(), typeof globalThis.leftover, typeof [].map, JSON.stringify({ a: 1 }),
            typeof ({}).polluted, typeof Math.floor, typeof globalThis.late, Math.random()];
        }`,
        'workflows/counter.js': 'let count = 0; export const bump = () => ++count;',
      };
      const run = (exportName: string) => {
        const outcome = runJob({ ...job(''), files, exportName });
        if (!outcome.ok) throw new Error(outcome.message);
        return JSON.parse(outcome.value!) as unknown[];
      };
      const first = run('leave');
      sandbox.restore();
      const second = run('look');
      expect(first[0]).toBe(1);
      expect(second.slice(0, 7)).toEqual([
        1,
        'undefined',
        'function',
        '{"a":1}',
        'undefined',
        'function',
        'undefined',
      ]);
      // QuickJS seeds Math.random once per context: each run must draw its own numbers, and the
      // seed is read through built-ins the first run replaced before its first draw (with theirs,
      // it would be all zeros, and the first draw 0).
      expect(second[7]).not.toBe(first[1]);
      expect(first[1]).toBeGreaterThan(0);
      expect(first[2]).not.toBe(first[1]);
    });

    it("leaves nothing of a run's values in the memory once its state is written back", () => {
      // Both only in the input, which the host writes into the memory; the error's message and
      // the number's digits pass through QuickJS's C stack as well as its heap.
      const outcome = runJob(
        job(
          'export function run(input) { try { eval(input.name); } catch (e) { return [String(e), Number(input.digits)]; } }',
          { inputJson: '{"name":"SECRET_tenantA_9f8e","digits":"98765432109876543"}' },
        ),
      );
      expect(outcome).toMatchObject({ ok: true });
      expect(outcome.ok && outcome.value).toContain("'SECRET_tenantA_9f8e' is not defined");
      expect(sandbox.memoryHolds('SECRET_tenantA_9f8e')).toBe(true);
      sandbox.restore();
      expect(sandbox.memoryHolds('SECRET_tenantA_9f8e')).toBe(false);
      expect(sandbox.memoryHolds('98765432109876')).toBe(false);
    });

    // The array is freed before the run ends (QuickJS counts references): an allocator that gave
    // the memory back, lowering the break, would leave those 8 MiB unzeroed, and this would fail.
    it('zeroes what a run wrote on the heap when its state is written back', () => {
      const outcome = runJob(
        job('export const run = () => new Uint8Array(8 << 20).fill(7).length;'),
      );
      expect(outcome).toMatchObject({ ok: true, value: String(8 << 20) });
      expect(sandbox.bytesWrittenPastState).toBeGreaterThanOrEqual(8 << 20);
      sandbox.restore();
      expect(sandbox.bytesWrittenPastState).toBe(0);
    });

    it('is whole again after a run that broke its memory or time limit', () => {
      const look = job(
        'export function run(input, pal) { globalThis.seen = (globalThis.seen ?? 0) + 1; return [globalThis.seen, [1, 2].map((n) => n * 2)]; }',
      );
      // (Endless recursion is test/workflows.int.test.ts's: on a worker thread QuickJS's stack
      // limit comes first, on this thread V8's own, which fails the sandbox.)
      for (const [source, type] of [
        ['const a = []; for (;;) a.push(new Array(100000).fill(a.length));', 'WORKFLOW_MEMORY'],
        ['for (;;) {}', 'WORKFLOW_TIMEOUT'],
      ] as const) {
        const broken = runJob(
          job(`export function run(input, pal) { globalThis.seen = 99; ${source} }`, {
            timeoutMs: 200,
          }),
        );
        expect(!broken.ok && broken.type).toBe(type);
        const outcome = runJob(look);
        expect(outcome.ok && JSON.parse(outcome.value!)).toEqual([1, [2, 4]]);
      }
    });

    // QuickJS leaves a module whose imports failed to load marked resolved, with an import that
    // points nowhere; an import that reached it later linked through that pointer (the WASM
    // aborted). A run's code now finds every module of its version compiled, or none loads.
    describe('imports in a cycle, one of which failed', () => {
      const cycle = {
        'workflows/x.js':
          "import { g } from './y.js'; import { big } from './big.js'; export const f = () => 'x' + g() + big.length;",
        'workflows/y.js': "import { f } from './x.js'; export const g = () => 'g'; export { f };",
        'workflows/big.js': `export const big = [${'{ a: 1 }, '.repeat(20_000)}];`,
      };
      const later = (before: string) => `export const run = async () => {
        let first = 'imported';
        ${before}
        try { await import('./x.js'); } catch (e) { first = String(e); }
        hog = null;
        const y = await import('./y.js');
        return [first, y.f()];
      };`;
      const runOwn = (own: Sandbox, j: SandboxJob) =>
        own.runJob(keyed ? { ...j, codeKey: codeKeyOf('e', j.files) } : j);

      it('a workflow that ran out of memory while one compiled, caught it, and imports another', async () => {
        const own = await Sandbox.create(32 * 1024 * 1024, CODE_CACHE_BYTES);
        // Memory filled, then a little given back: enough to run on, not to compile big.js.
        const files = {
          ...cycle,
          'workflows/tx.js': later(`let hog = [], n = 0;
            try { for (;;) hog.push(new Array(4096).fill(n++)); } catch {}
            for (let i = 0; i < 40; i++) hog.pop();`),
        };
        for (let i = 0; i < 2; i++) {
          const outcome = runOwn(
            own,
            job('', { files, memoryBytes: 32 * 1024 * 1024, timeoutMs: 5000 }),
          );
          expect(outcome).toMatchObject({ ok: true, value: '["imported","xg20000"]' });
        }
      });

      it('a version one of whose modules imports a file it does not have fails before its code runs', async () => {
        const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
        const files = {
          ...cycle,
          'workflows/x.js': `import './missing.js'; ${cycle['workflows/x.js']}`,
          'workflows/tx.js': later('let hog = 1; pal.log("ran");'),
        };
        for (let i = 0; i < 2; i++) {
          const outcome = runOwn(own, job('', { files }));
          expect(outcome).toMatchObject({
            ok: false,
            type: 'WORKFLOW_ERROR',
            message: expect.stringMatching(/^Error: no module "workflows\/missing.js"/) as string,
            logs: [],
          });
          expect(outcome.retire).toBe(false);
        }
        expect(runOwn(own, job('export const run = () => 1;'))).toMatchObject({
          ok: true,
          value: '1',
        });
      });
    });

    it.each([
      [
        'a getter that loops, read by pal.log',
        'pal.log(new Proxy({}, { get() { for (;;) {} } }));',
        'WORKFLOW_TIMEOUT',
      ],
      [
        'a toJSON that loops, read by pal.log',
        'pal.log({ toJSON() { for (;;) {} } });',
        'WORKFLOW_TIMEOUT',
      ],
      [
        'a getter that fills the memory, read by pal.log',
        'pal.log(new Proxy({}, { get() { const a = []; for (;;) a.push(new Array(100000).fill(1)); } }));',
        'WORKFLOW_MEMORY',
      ],
      [
        'a toJSON that fills the memory, read by pal.vars.set',
        'try { pal.vars.set("x", { toJSON() { const a = []; for (;;) a.push(new Array(100000).fill(1)); } }); } catch {}',
        'WORKFLOW_MEMORY',
      ],
    ] as const)(
      'fails a run that broke its limit inside a host call, whatever it did next: %s',
      (_what, source, type) => {
        const outcome = runJob(
          job(
            `export function run(input, pal) { ${source} pal.vars.set("after", "kept"); return { after: true }; }`,
            { timeoutMs: 300 },
          ),
        );
        expect(!outcome.ok && outcome.type).toBe(type);
        expect('effects' in outcome).toBe(false);
        const next = runJob(job('export function run() { return 1; }'));
        expect(next.ok && next.value).toBe('1');
      },
    );

    it('an argument whose toJSON throws errors without end is a value it cannot write, not a failed sandbox', () => {
      const outcome = runJob(
        job(
          'export function run(input, pal) { const b = () => ({ toJSON() { throw { message: b() }; } }); pal.log(b()); return "on"; }',
        ),
      );
      expect(outcome.ok && outcome.value).toBe('"on"');
      expect(outcome.logs).toEqual(['[a value that cannot be written as JSON]']);
      expect(outcome.retire).toBeFalsy();
    });

    it('takes no further run once the WASM module itself failed', async () => {
      const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
      // Endless recursion on this thread overflows V8's stack inside the module: a trap, after
      // which the module's stack pointer is not where it was.
      const broken = own.runJob(
        job('export function run() { const deep = (n) => deep(n + 1) + 1; return deep(0); }'),
      );
      const next = own.runJob(job('export function run() { return 1; }'));
      expect([broken.ok, !broken.ok && broken.retire]).toEqual([false, true]);
      expect(next).toMatchObject({ ok: false, message: 'the sandbox failed', retire: true });
    });

    it('draws new numbers from Math.random in every run, each in [0, 1)', () => {
      const draw = job(
        'export function run() { return Array.from({ length: 1000 }, () => Math.random()); }',
      );
      const numbers = [draw, draw].flatMap((j) => {
        const outcome = runJob(j);
        return outcome.ok ? (JSON.parse(outcome.value!) as number[]) : [];
      });
      expect(numbers).toHaveLength(2000);
      expect(new Set(numbers).size).toBe(2000);
      expect(numbers.every((n) => n >= 0 && n < 1)).toBe(true);
    });

    it('bounds how deep pal methods nest through toJSON, and stays whole', () => {
      const outcome = runJob(
        job(`export function run(input, pal) {
        let depth = 0;
        const o = { toJSON() { depth++; try { pal.vars.get(o); } catch (e) { return e.message; } return 'x'; } };
        try { pal.vars.get(o); } catch {}
        return depth;
      }`),
      );
      expect(outcome).toMatchObject({ ok: true, value: '32' });
      expect(runJob(job('export function run() { return 1; }'))).toMatchObject({ ok: true });
    });

    it('retires its worker after a run that grew the WASM memory, which a module never gives back', async () => {
      const big = await Sandbox.create(256 * 1024 * 1024, CODE_CACHE_BYTES);
      const outcome = big.runJob(
        job(
          'export function run() { const b = []; for (let i = 0; i < 5; i++) b.push(new Uint8Array(16 << 20)); return b.length; }',
          { memoryBytes: 256 * 1024 * 1024 },
        ),
      );
      expect(outcome).toMatchObject({ ok: true, value: '5', retire: true });
      const small = big.runJob(
        job('export function run() { return 1; }', { memoryBytes: 256 * 1024 * 1024 }),
      );
      expect(small.retire).toBeUndefined();
    });

    it('strings cross into and out of the sandbox whole: NUL, control characters, lone surrogates', () => {
      const odd = [
        'ab\u0000cd',
        '\u0000',
        'x\u0001y',
        'ab\ud800cd',
        '\udc00',
        '\ud800\u0000a',
        'é😀\uFFFD',
      ];
      const outcome = runJob(
        job(
          `export function run(input, pal) {
          const seen = input.odd.map((v, i) => pal.vars.get('v' + i));
          input.odd.forEach((v) => pal.log(v));
          // What a run keeps must be text XML can carry: the others are refused, not cut short.
          const kept = input.odd.map((v, i) => {
            try { pal.vars.set('w' + i, v); return pal.vars.get('w' + i); } catch (e) { return e.message; }
          });
          return { seen, lengths: seen.map((v) => v.length), kept };
        }`,
          {
            inputJson: JSON.stringify({ odd }),
            vars: Object.fromEntries(odd.map((v, i) => [`v${i}`, v])),
          },
        ),
      );
      expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
      if (!outcome.ok) return;
      const value = JSON.parse(outcome.value!) as {
        seen: string[];
        lengths: number[];
        kept: string[];
      };
      expect(value.seen).toEqual(odd);
      expect(value.lengths).toEqual(odd.map((v) => v.length));
      expect(outcome.logs).toEqual(odd);
      const refused =
        'pal.vars.set: value holds a character that cannot be kept (a NUL, another control character but tab and line breaks, or a lone surrogate)';
      expect(value.kept).toEqual([...Array(6).fill(refused), 'é😀\uFFFD']);
      expect(outcome.effects.vars).toEqual({ w6: 'é😀\uFFFD' });
    });

    it('keeps a variable named __proto__ as an own key: read, listed and set', () => {
      const outcome = runJob({
        ...job(`export function run(input, pal) {
          const before = pal.vars.all();
          pal.vars.set('__proto__', 'after');
          return { before: Object.keys(before), got: pal.vars.get('__proto__'), all: pal.vars.all(), proto: Object.getPrototypeOf(pal.vars.all()) === Object.prototype };
        }`),
        vars: Object.fromEntries([['__proto__', 'before']]),
      });
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) return;
      expect(outcome.value).toBe(
        '{"before":["__proto__"],"got":"after","all":{"__proto__":"after"},"proto":true}',
      );
      expect(Object.entries(outcome.effects.vars)).toEqual([['__proto__', 'after']]);
    });

    it('collects effects without applying them, and the run sees its own writes', () => {
      const outcome = runJob(
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
      expect(JSON.parse(outcome.value!)).toEqual({
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
        clearedSignatures: [],
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
        job(
          `export function run(input, pal) { try { ${code}; return 'no error'; } catch (e) { return e.name + ': ' + e.message; } }`,
        ),
      );
      expect(outcome.ok).toBe(true);
      expect(outcome.ok && JSON.parse(outcome.value!)).toMatch(message);
    });

    it("changes a transaction's documents only while it is OPEN: clearSignature, setField", () => {
      const documents = [
        {
          filename: 'documents/claim.pdf',
          contentType: 'application/pdf',
          fields: [{ id: 'name', type: 'TEXT', page: 1, x: 0, y: 0, width: 10, height: 10 }],
          signatures: [
            { id: 'employee', role: 'owner', page: 1, x: 0, y: 0, recordTime: 1_700_000_000 },
          ],
        },
      ] as unknown as SandboxJob['documents'];
      const source = `export function run(input, pal) {
      const tried = [];
      for (const change of [
        () => pal.documents.clearSignature('documents/claim.pdf', 'employee'),
        () => pal.documents.setField('documents/claim.pdf', 'name', 'Ada'),
        () => pal.documents.clearSignature('documents/claim.pdf', 'nobody'),
      ]) {
        try { change(); tried.push('ok'); } catch (e) { tried.push(e.name + ': ' + e.message); }
      }
      return { tried, signed: pal.documents.list()[0].signatures[0].recordTime };
    }`;
      const open = runJob(job(source, { documents }));
      expect(open.ok && JSON.parse(open.value!)).toEqual({
        tried: [
          'ok',
          'ok',
          'TypeError: pal.documents.clearSignature: "documents/claim.pdf" has no signature "nobody"',
        ],
        signed: 0,
      });
      expect(open.ok && open.effects.clearedSignatures).toEqual([
        { file: 'documents/claim.pdf', signatureId: 'employee' },
      ]);
      const completed = runJob(
        job(source, {
          documents,
          transaction: { ...job('').transaction!, systemStatus: 'COMPLETED' },
        }),
      );
      expect(completed.ok && JSON.parse(completed.value!)).toEqual({
        tried: [
          'TypeError: pal.documents.clearSignature: the transaction is COMPLETED; its documents change only while it is OPEN',
          'TypeError: pal.documents.setField: the transaction is COMPLETED; its documents change only while it is OPEN',
          'TypeError: pal.documents.clearSignature: the transaction is COMPLETED; its documents change only while it is OPEN',
        ],
        signed: 1_700_000_000,
      });
      expect(completed.ok && completed.effects).toMatchObject({
        fields: [],
        clearedSignatures: [],
      });
    });

    it('console runs have no transaction, roles or mail', () => {
      const outcome = runJob(
        job(
          'export function run(input, pal) { return [typeof pal.transaction, (() => { try { pal.roles.list(); } catch (e) { return e.message; } })()]; }',
          {
            transaction: undefined,
          },
        ),
      );
      expect(outcome.ok && JSON.parse(outcome.value!)).toEqual([
        'undefined',
        'pal.roles.list is only available in transaction runs',
      ]);
    });

    it('resolves relative imports inside the pal and reports frames of its files only', () => {
      expect(normalizeModuleName('workflows/a/tx.js', '../lib.js')).toBe('workflows/lib.js');
      expect(normalizeModuleName('workflows/tx.js', './lib.js')).toBe('workflows/lib.js');
      expect(normalizeModuleName('workflows/tx.js', 'fs')).toBe('fs');
      // The files a run can import, all compiled before its code runs; no import reaches the rest.
      expect(
        importablePaths({
          'workflows/tx.js': '',
          'a//b.js': '',
          './x.js': '',
          '../y.js': '',
          'pal:compile': '',
          'pal:end-of-compile': '',
        }),
      ).toEqual(['workflows/tx.js', 'a//b.js']);
      // The compile's own modules: only the compile may import its end, and nobody the compile.
      expect(normalizeModuleName('pal:compile', 'pal:end-of-compile')).toBe('pal:end-of-compile');
      for (const [base, requested] of [
        ['workflows/tx.js', 'pal:compile'],
        ['workflows/tx.js', 'pal:end-of-compile'],
        ['tx.js', './pal:compile'],
        ['pal:driver', 'pal:end-of-compile'],
        ['pal:compile', 'pal:compile'],
      ])
        expect(normalizeModuleName(base!, requested!)).toMatch(/^pal:[a-z-]+ \(the host's\)$/);
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
      runJob(job(`export function run(input, pal) { ${source} }`, over));

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
    ])(
      '%s: the run fails with WORKFLOW_MEMORY naming the bound',
      (_what, source, over, message) => {
        const outcome = run(source, over);
        expect(outcome.ok).toBe(false);
        if (outcome.ok) return;
        expect([outcome.type, outcome.message]).toEqual(['WORKFLOW_MEMORY', message]);
      },
    );

    // Found by the sandbox probe: each of these was a WORKFLOW_ERROR, a success, or a whole copy.
    it.each([
      [
        'an interruption caught in a promise job',
        'try { await Promise.resolve().then(() => { for (;;) {} }); } catch (e) { return "caught " + e; }',
        'WORKFLOW_TIMEOUT',
      ],
      [
        'a promise chain that outlives its time limit',
        'const f = () => Promise.resolve().then(f); f(); return new Promise(() => {});',
        'WORKFLOW_TIMEOUT',
      ],
      [
        'a thrown value whose message getter reaches the limit',
        'throw { name: "X", get message() { for (;;) {} } };',
        'WORKFLOW_TIMEOUT',
      ],
      [
        'a result whose JSON runs out of memory',
        'const s = "x".repeat(1 << 20); return new Array(200).fill(s);',
        'WORKFLOW_MEMORY',
      ],
      ['a function returned', 'return () => 1;', 'WORKFLOW_ERROR'],
      ['a symbol returned', 'return Symbol("s");', 'WORKFLOW_ERROR'],
    ])('%s: %s', async (_what, source, type) => {
      const outcome = runJob(
        job(`export async function run(input, pal) { ${source} }`, { timeoutMs: 300 }),
      );
      expect(!outcome.ok && outcome.type, JSON.stringify(outcome)).toBe(type);
    });

    it('a thrown Symbol or BigInt, or one passed to a pal method, is named, not copied whole', () => {
      for (const [thrown, said] of [
        ['Symbol("s".repeat(3_000_000))', 'thrown value: a Symbol'],
        ['2n ** 100000n', 'thrown value: a BigInt'],
      ] as const) {
        const outcome = run(`throw ${thrown};`);
        expect(!outcome.ok && outcome.message).toBe(said);
      }
      const logged = run(
        'pal.log(2n ** 1000000n); pal.log(Symbol("s".repeat(3_000_000))); return 1;',
      );
      expect(logged.ok).toBe(true);
      expect(logged.logs.join('\n').length).toBeLessThan(200);
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
      expect(outcome.ok && JSON.parse(outcome.value!)).toBe(
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
      [
        'throw { message: "z".repeat(5000) }',
        /^Error: z{2000}… \(cut to 2000 of 5000 characters\)$/,
      ],
    ])('%s: the message is cut to the documented length', (source, message) => {
      const outcome = run(source);
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.type).toBe('WORKFLOW_ERROR');
      expect(outcome.message).toMatch(message);
    });
  });
});

describe('the compiled modules of pal versions (SandboxJob.codeKey)', () => {
  const version = (files: Record<string, string>, over: Partial<SandboxJob> = {}): SandboxJob => ({
    ...job('', over),
    files,
    codeKey: codeKeyOf('e', files),
  });
  /** The key of a job's state in a sandbox: its version's. */
  const stateKey = (j: SandboxJob) => j.codeKey;
  const value = (outcome: ReturnType<Sandbox['runJob']>) => {
    if (!outcome.ok) throw new Error(outcome.message);
    return outcome.value;
  };

  it('keys a version by its owner and every path and text of its files, in any order', () => {
    const key = codeKeyOf('e', { 'a.js': 'x', 'b.js': 'y' });
    expect(codeKeyOf('e', { 'b.js': 'y', 'a.js': 'x' })).toBe(key);
    expect(codeKeyOf('f', { 'a.js': 'x', 'b.js': 'y' })).not.toBe(key);
    for (const other of [
      { 'a.js': 'x', 'b.js': 'z' } as Record<string, string>,
      { 'a.js': 'x', 'c.js': 'y' },
      { 'a.js': 'x' },
      { 'a.js': 'x', 'b.js': 'y', 'c.js': '' },
      { 'a.js': 'x","b.js":"y' },
    ])
      expect(codeKeyOf('e', other)).not.toBe(key);
  });

  it('runs each version its own code, two versions with the same files by name in turn', async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    const one = version({
      'workflows/tx.js': "import { n } from './n.js'; export const run = () => 'one ' + n();",
      'workflows/n.js': 'let count = 0; export const n = () => ++count;',
    });
    const two = version({
      'workflows/tx.js': "import { n } from './n.js'; export const run = () => 'two ' + n();",
      'workflows/n.js': 'let count = 10; export const n = () => ++count;',
    });
    for (let i = 0; i < 3; i++) {
      expect(value(own.runJob(one))).toBe('"one 1"');
      expect(value(own.runJob(two))).toBe('"two 11"');
      own.restore();
    }
    // A run without a key, between them, starts from the built state: no version's module is there.
    const unkeyed = own.runJob(
      job('export const run = () => import("./n.js").then(() => 1, (e) => e.message);'),
    );
    expect(JSON.parse(value(unkeyed)!)).toMatch(/^no module "workflows\/n.js"/);
    expect(value(own.runJob(one))).toBe('"one 1"');
    expect(own.keptCode.map((kept) => kept.key)).toEqual([stateKey(two), stateKey(one)]);
  });

  it('runs the modules compiled for its key, imports included: a key names its files exactly', async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    const files = (word: string) => ({
      'workflows/tx.js': `import { n } from './n.js'; export const run = () => '${word} ' + n();`,
      'workflows/n.js': 'let count = 0; export const n = () => ++count;',
    });
    const modules = { transaction: 'workflows/tx.js', counter: 'workflows/n.js' };
    const one = version(files('one'), { modules });
    expect(value(own.runJob(one))).toBe('"one 1"');
    // Other files under the same key: the run is the key's, compiled before it.
    expect(value(own.runJob({ ...one, files: files('two') }))).toBe('"one 1"');
    expect(own.keptCode).toEqual([{ key: stateKey(one), bytes: expect.any(Number) as number }]);
  });

  it('compiles every module of the version once, whichever module a run runs', async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    const files = {
      'workflows/tx.js': 'export const run = () => 1;',
      'workflows/console.js': 'export const run = () => 2;',
    };
    const modules = { transaction: 'workflows/tx.js', console: 'workflows/console.js' };
    const transactionRun = version(files, { modules });
    expect(value(own.runJob(transactionRun))).toBe('1');
    expect(value(own.runJob({ ...transactionRun, module: 'console' }))).toBe('2');
    expect(own.keptCode).toEqual([
      { key: stateKey(transactionRun), bytes: expect.any(Number) as number },
    ]);
    // A module that does not compile fails the runs of every module, before any code runs (the
    // deploy-time check refuses such a pal: a run meets it only when its memory limit is lower).
    const broken = version(
      { ...files, 'workflows/console.js': 'export const run = () => {;' },
      { modules },
    );
    for (const run of [broken, { ...broken, codeKey: undefined }]) {
      const outcome = own.runJob(run);
      expect(outcome).toMatchObject({ ok: false, type: 'WORKFLOW_ERROR' });
      expect(outcome.ok || outcome.message).toMatch(/^SyntaxError/);
    }
    expect(own.keptCode.at(-1)).toEqual({ key: stateKey(broken), bytes: null });
  });

  it('runs a version whose module does not compile as without a key: the run reports the error', async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    const broken = version({
      'workflows/tx.js': "import './lib.js'; export const run = () => 1;",
      'workflows/lib.js': 'export const x = {;',
    });
    for (const outcome of [own.runJob(broken), own.runJob(broken)]) {
      expect(outcome).toMatchObject({ ok: false, type: 'WORKFLOW_ERROR' });
      expect(outcome.ok || outcome.message).toMatch(/SyntaxError/);
    }
    expect(own.keptCode).toEqual([{ key: stateKey(broken), bytes: null }]);
    // What did compile before the error is not left for the next version.
    const next = version({ 'workflows/tx.js': 'export const run = () => 2;' });
    expect(value(own.runJob(next))).toBe('2');
    expect(value(own.runJob({ ...next, codeKey: undefined }))).toBe('2');
  });

  // quickjs-emscripten 0.32 reads bytes 80 to 87 of a module compiled by its compile-only
  // evaluation as the module's namespace: this source made them a fake one, and the WASM trapped.
  it('compiles a module whose text would pass for a module record', async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    const head = 'export const run = () => 1; //';
    for (const fill of ['A', '\0']) {
      const source = `${head}${'x'.repeat(80 - head.length)}\0\0\0\0\x03\0\0\0${fill.repeat(200)}\n`;
      const crafted = version({ 'workflows/tx.js': source });
      for (let i = 0; i < 2; i++)
        expect(own.runJob(crafted)).toMatchObject({ ok: true, value: '1' });
    }
    expect(own.keptCode.every((kept) => kept.bytes !== null)).toBe(true);
  });

  // The compile's module is freed when the compile stops: a module that imported it would keep
  // a pointer to freed memory in the version's state (the WASM aborted, or ran on, in every run).
  it("refuses a pal's import of the compile's own modules, and keeps no state for it", async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    for (const [file, source] of [
      ['workflows/tx.js', "import 'pal:compile'; export const run = () => 1;"],
      ['workflows/tx.js', "import * as w from 'pal:compile'; export const run = () => 1;"],
      ['workflows/tx.js', "import { x } from 'pal:compile'; export const run = () => x();"],
      ['workflows/tx.js', "import 'pal:end-of-compile'; export const run = () => 1;"],
      ['tx.js', "import './pal:compile'; export const run = () => 1;"],
    ] as const) {
      const v = version({ [file]: source }, { modules: { transaction: file } });
      for (let i = 0; i < 2; i++) {
        const outcome = own.runJob(v);
        expect(outcome).toMatchObject({ ok: false, type: 'WORKFLOW_ERROR' });
        expect(outcome.ok || outcome.message).toMatch(/no module "pal:[a-z-]+ \(the host's\)"/);
        expect(outcome.retire).not.toBe(true);
      }
      expect(own.keptCode.at(-1)).toEqual({ key: stateKey(v), bytes: null });
    }
    expect(value(own.runJob(version({ 'workflows/tx.js': 'export const run = () => 3;' })))).toBe(
      '3',
    );
  });

  it('keeps what its bytes allow, the least recently run dropped first, and nothing at 0', async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, 500 * 1024);
    const versions = [1, 2, 3].map((n) =>
      version({ 'workflows/tx.js': `export const run = () => ${n};` }),
    );
    for (const v of versions) value(own.runJob(v));
    value(own.runJob(versions[1]!));
    value(own.runJob(versions[2]!));
    // A state is the built state (some 192 KiB) and the module: three do not fit in 500 KiB.
    expect(own.keptCode.map((kept) => kept.key)).toEqual([
      stateKey(versions[1]!),
      stateKey(versions[2]!),
    ]);
    expect(value(own.runJob(versions[0]!))).toBe('1');
    expect(own.keptCode.map((kept) => kept.key)).toEqual([
      stateKey(versions[2]!),
      stateKey(versions[0]!),
    ]);

    const none = await Sandbox.create(64 * 1024 * 1024, 0);
    for (const v of versions)
      expect(value(none.runJob(v))).toBe(v.files['workflows/tx.js']!.at(-2));
    expect(none.keptCode).toEqual([]);

    // A state larger than the whole budget is not kept, and not made again at every run.
    const small = await Sandbox.create(64 * 1024 * 1024, 100 * 1024);
    for (let i = 0; i < 2; i++) expect(value(small.runJob(versions[0]!))).toBe('1');
    expect(small.keptCode).toEqual([{ key: stateKey(versions[0]!), bytes: null }]);
  });

  it("leaves no other version's compiled modules in the free memory of a run", async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    const large = version({
      'workflows/tx.js': `export const run = () => 1;\n${Array.from({ length: 2000 }, (_, i) => `export const x${i} = [1, 2, 3].map((n) => n * ${i});\n`).join('')}`,
    });
    value(own.runJob(large));
    own.restore();
    // A run from the built state, and one of a small version: nothing of `large` past either.
    for (const next of [
      job('export const run = () => 2;'),
      version({ 'workflows/tx.js': 'export const run = () => 3;' }),
    ]) {
      value(own.runJob(next));
      own.restore();
      expect(own.bytesWrittenPastState).toBe(0);
    }
  });

  it("keeps a version's compiled modules and no memory an earlier run wrote", async () => {
    const own = await Sandbox.create(64 * 1024 * 1024, CODE_CACHE_BYTES);
    // 32 MiB written and freed: free memory, past the built state's heap, that is not zero.
    value(
      own.runJob(
        version({
          'workflows/tx.js':
            'export const run = () => { let s = []; for (let i = 0; i < 8; i++) s.push(new Uint8Array(4 << 20).fill(7)); s = null; return 1; };',
        }),
      ),
    );
    value(own.runJob(version({ 'workflows/tx.js': 'export const run = () => 2;' })));
    expect(own.keptCode).toHaveLength(2);
    const [first, second] = own.keptCode;
    expect(second!.bytes).toBeLessThan(first!.bytes! + 64 * 1024);
    expect(second!.bytes).toBeLessThan(1024 * 1024);
  });
});
