// One workflow run inside QuickJS: a fresh runtime and context per run (nothing survives from
// one run to the next), the pal's modules loaded from memory, the time limit enforced by
// QuickJS's interrupt handler and the memory limit by its allocator, with the WASM memory of the
// whole module capped as well (quickjs-emscripten #255/#271: the allocator limit alone does not
// bound large strings and typed arrays). The wall-clock backstop is the pool's (pool.ts).
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import type { FailureType, SandboxJob, SandboxOutcome, StackFrame } from './job.js';
import { RunState, type Operation } from './host-api.js';
import { driverSource } from './prelude.js';

const WASM_PAGE = 64 * 1024;
/** Room for QuickJS's own structures beside the heap the guest may fill. */
const WASM_HEADROOM_BYTES = 32 * 1024 * 1024;
const MAX_STACK_BYTES = 512 * 1024;

// @types/node of the Node 20 line does not declare the WebAssembly global; only Memory is needed.
const { Memory } = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => object };
  }
).WebAssembly;

/**
 * A QuickJS module whose WASM memory can never grow past twice the run's memory limit plus
 * headroom. One per worker thread: a module is single-threaded, and after a broken limit it is
 * thrown away with its worker (quickjs-emscripten #257).
 */
export async function loadSandboxModule(memoryLimitBytes: number): Promise<QuickJSWASMModule> {
  const maximumBytes = 2 * memoryLimitBytes + WASM_HEADROOM_BYTES;
  const wasmMemory = new Memory({
    initial: 256, // 16 MiB: what the build asks for at start
    maximum: Math.min(65_536, Math.ceil(maximumBytes / WASM_PAGE)),
  });
  return newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmMemory: wasmMemory as never }),
  );
}

/** Resolves `./x.js` and `../x.js` against the importing module's path; bare names stay as they are. */
export function normalizeModuleName(base: string, requested: string): string {
  if (!requested.startsWith('./') && !requested.startsWith('../')) return requested;
  const parts = base.split('/').slice(0, -1);
  for (const part of requested.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}

interface GuestError {
  name: string;
  message: string;
  stack: string;
}

const MAX_FRAMES = 20;

export function runJob(quickjs: QuickJSWASMModule, job: SandboxJob): SandboxOutcome {
  const started = performance.now();
  const deadline = Date.now() + job.timeoutMs;
  let interrupted = false;
  const runtime = quickjs.newRuntime({
    memoryLimitBytes: job.memoryBytes,
    maxStackSizeBytes: MAX_STACK_BYTES,
    interruptHandler: () => (interrupted = Date.now() > deadline),
  });
  runtime.setModuleLoader(
    (name) =>
      Object.hasOwn(job.files, name)
        ? job.files[name]!
        : {
            error: new Error(`no module "${name}" in this pal (only the files its manifest names)`),
          },
    (base, requested) => normalizeModuleName(base, requested),
  );
  const context = runtime.newContext();
  const state = new RunState(job);
  let outcome: SandboxOutcome;
  try {
    outcome = evaluate(context, state, job, () => interrupted);
  } catch (error) {
    // The WASM module itself failed (it ran out of its capped memory, most likely).
    const message = error instanceof Error ? error.message : String(error);
    const memory = /memory|out of bounds|abort/i.test(message);
    outcome = {
      ...failure(
        memory ? 'WORKFLOW_MEMORY' : 'WORKFLOW_ERROR',
        memory ? limitMessage('WORKFLOW_MEMORY', job)! : `the sandbox failed: ${message}`,
        [],
        state,
      ),
      retire: true,
    };
  }
  // A run that broke a limit retires its worker, whose memory goes with it: freeing the runtime
  // then can abort inside QuickJS (an assertion after an interrupt), so it is not tried.
  if (outcome.ok || !outcome.retire) {
    try {
      context.dispose();
      runtime.dispose();
    } catch {
      // The module cannot be trusted for another run: its worker retires.
      outcome = outcome.ok
        ? { ...failure('WORKFLOW_ERROR', 'the sandbox failed', [], state), retire: true }
        : { ...outcome, retire: true };
    }
  }
  outcome.durationMs = performance.now() - started;
  return outcome;
}

function evaluate(
  context: QuickJSContext,
  state: RunState,
  job: SandboxJob,
  interrupted: () => boolean,
): SandboxOutcome {
  const modulePath = Object.hasOwn(job.modules, job.module) ? job.modules[job.module] : undefined;
  if (modulePath === undefined || !Object.hasOwn(job.files, modulePath))
    return failure('NO_WORKFLOW', `the pal has no workflow module "${job.module}"`, [], state);

  const driver = context.evalCode(driverSource(modulePath, job.exportName), 'pal:driver', {
    type: 'global',
  });
  if (driver.error) return guestFailure(context, driver.error, job, state, interrupted());
  const pal = buildPal(context, state, job);
  const module = hostFunction(context, state, 'module');
  const input = context.newString(job.inputJson);
  const call = context.callFunction(driver.value, context.undefined, pal, module, input);
  for (const handle of [driver.value, pal, module, input]) handle.dispose();
  if (call.error) return guestFailure(context, call.error, job, state, interrupted());
  const promise = call.value;
  try {
    const pending = context.runtime.executePendingJobs(-1);
    if (pending.error) return guestFailure(context, pending.error, job, state, interrupted());
    const settled = context.getPromiseState(promise);
    if (settled.type === 'pending')
      return failure(
        'WORKFLOW_ERROR',
        'the workflow returned a promise that never settles',
        [],
        state,
      );
    if (settled.type === 'rejected')
      return guestFailure(context, settled.error, job, state, interrupted());
    const result = settled.value;
    try {
      const type = context.typeof(result);
      if (type === 'object')
        return failure(
          'NO_WORKFLOW',
          `the workflow module "${job.module}" has no export "${job.exportName}"`,
          [],
          state,
        );
      let valueJson: string | undefined;
      if (type === 'string') {
        if (stringLength(context, result) > job.maxResultLength)
          return failure(
            'WORKFLOW_ERROR',
            `the workflow's result is larger than ${job.maxResultLength} characters of JSON`,
            [],
            state,
          );
        valueJson = context.getString(result);
      }
      return { ok: true, valueJson, effects: state.effects, logs: state.logs, durationMs: 0 };
    } finally {
      result.dispose();
    }
  } finally {
    promise.dispose();
  }
}

/** The `pal` object without `call` (the driver adds it): host functions over RunState. */
function buildPal(context: QuickJSContext, state: RunState, job: SandboxJob): QuickJSHandle {
  const pal = context.newObject();
  const set = (target: QuickJSHandle, key: string, value: QuickJSHandle) => {
    context.setProp(target, key, value);
    value.dispose();
  };
  const group = (methods: Record<string, Operation>) => {
    const object = context.newObject();
    for (const [name, op] of Object.entries(methods))
      set(object, name, hostFunction(context, state, op));
    return object;
  };
  set(pal, 'log', hostFunction(context, state, 'log'));
  set(pal, 'vars', group({ get: 'vars.get', set: 'vars.set', all: 'vars.all' }));
  set(pal, 'roles', group({ assign: 'roles.assign', remove: 'roles.remove', list: 'roles.list' }));
  set(pal, 'mail', group({ send: 'mail.send' }));
  if (job.transaction) {
    const transaction = group({ setStatus: 'tx.setStatus' });
    for (const event of ['complete', 'cancel'])
      set(
        transaction,
        event,
        context.newFunction(event, () => toHandle(context, state.call('tx.move', [event]))),
      );
    for (const field of ['id', 'palId', 'status', 'systemStatus', 'webServiceStatus'])
      context.defineProp(transaction, field, {
        get: () => toHandle(context, state.call('tx.get', [field])),
        enumerable: true,
        configurable: false,
      });
    set(pal, 'transaction', transaction);
  }
  return pal;
}

function hostFunction(context: QuickJSContext, state: RunState, op: Operation): QuickJSHandle {
  return context.newFunction(op, (...handles) =>
    toHandle(
      context,
      state.call(
        op,
        handles.map((handle) => context.dump(handle) as unknown),
      ),
    ),
  );
}

/** Plain data (strings, arrays, objects of them) into the guest. */
function toHandle(context: QuickJSContext, value: unknown): QuickJSHandle {
  if (value === undefined) return context.undefined;
  if (typeof value === 'string') return context.newString(value);
  const target = Array.isArray(value) ? context.newArray() : context.newObject();
  for (const [key, item] of Object.entries(value as object)) {
    const handle = toHandle(context, item);
    context.setProp(target, key, handle);
    handle.dispose();
  }
  return target;
}

function stringLength(context: QuickJSContext, handle: QuickJSHandle): number {
  const length = context.getProp(handle, 'length');
  const size = context.getNumber(length);
  length.dispose();
  return size;
}

function guestFailure(
  context: QuickJSContext,
  handle: QuickJSHandle,
  job: SandboxJob,
  state: RunState,
  interrupted: boolean,
): SandboxOutcome {
  const error = dumpError(context, handle);
  handle.dispose();
  const type = classify(error, interrupted);
  return failure(
    type,
    limitMessage(type, job) ?? `${error.name}: ${error.message}`,
    stackFrames(error.stack),
    state,
  );
}

function failure(
  type: FailureType,
  message: string,
  frames: StackFrame[],
  state: RunState,
): SandboxOutcome & { ok: false } {
  // A run that hit a limit may have left the module's memory in a bad way (quickjs-emscripten #257).
  const retire = type === 'WORKFLOW_MEMORY' || type === 'WORKFLOW_TIMEOUT';
  return { ok: false, type, message, frames, logs: state.logs, durationMs: 0, retire };
}

function dumpError(context: QuickJSContext, handle: QuickJSHandle): GuestError {
  const dumped: unknown = context.dump(handle);
  if (dumped !== null && typeof dumped === 'object') {
    const { name, message, stack } = dumped as Record<string, unknown>;
    return {
      name: typeof name === 'string' ? name : 'Error',
      message: typeof message === 'string' ? message : String(message),
      stack: typeof stack === 'string' ? stack : '',
    };
  }
  return { name: 'thrown value', message: String(dumped), stack: '' };
}

function classify(error: GuestError, interrupted: boolean): FailureType {
  if (interrupted || (error.name === 'InternalError' && error.message === 'interrupted'))
    return 'WORKFLOW_TIMEOUT';
  // "string too long": QuickJS's own cap on one string, reached before the allocator's limit
  // because that limit does not count large strings (quickjs-emscripten #271).
  if (
    error.name === 'InternalError' &&
    (error.message === 'out of memory' || error.message === 'string too long')
  )
    return 'WORKFLOW_MEMORY';
  return 'WORKFLOW_ERROR';
}

function limitMessage(type: FailureType, job: SandboxJob): string | undefined {
  if (type === 'WORKFLOW_TIMEOUT') return `the workflow ran longer than ${job.timeoutMs} ms`;
  if (type === 'WORKFLOW_MEMORY')
    return `the workflow used more than ${job.memoryBytes / 1048576} MB of memory`;
  return undefined;
}

/** QuickJS frames look like `    at approve (workflows/tx.js:12:5)`; the pal's own modules only. */
export function stackFrames(stack: string): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const match of stack.matchAll(/^\s*at (\S+) \(([^():]+):(\d+)(?::\d+)?\)/gm)) {
    const [, functionName, file, line] = match;
    if (file!.startsWith('pal:')) continue;
    frames.push({ functionName: functionName!, file: file!, line: Number(line) });
    if (frames.length === MAX_FRAMES) break;
  }
  return frames;
}
