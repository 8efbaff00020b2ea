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
import { Oversized, RunState, Unwritable, type Operation } from './host-api.js';
import { cut, memoryMessage, RUN_BOUNDS, timeoutMessage } from './limits.js';
import { driverSource } from './prelude.js';

const WASM_PAGE = 64 * 1024;
/** Room for QuickJS's own structures beside the heap the guest may fill. */
const WASM_HEADROOM_BYTES = 32 * 1024 * 1024;
const MAX_STACK_BYTES = 512 * 1024;

// Neither @types/node nor the ES libs the server compiles with declare the WebAssembly global (it
// is typed in TypeScript's DOM lib, left out here); only Memory is needed.
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

/**
 * Built-in functions taken from the fresh context before any guest code runs. A workflow may
 * replace `String.prototype.slice` or `JSON.stringify`, never these function objects: the host
 * reads what the guest hands it through them, never whole when it is too long.
 */
interface Natives {
  slice: QuickJSHandle;
  stringify: QuickJSHandle;
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
        memory ? memoryMessage(job) : `the sandbox failed: ${message}`,
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
  // A broken bound is the run's failure, whatever the workflow did after it (caught the
  // RangeError and returned, or went on until its time limit).
  if (state.broken !== undefined)
    outcome = {
      ...failure('WORKFLOW_MEMORY', state.broken, [], state, false),
      retire: !outcome.ok && outcome.retire === true,
    };
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

  const natives = takeNatives(context);
  try {
    return evaluateModule(context, natives, state, job, modulePath, interrupted);
  } finally {
    natives.slice.dispose();
    natives.stringify.dispose();
  }
}

/** The built-ins of Natives, read from the fresh context's globals (no code to compile). */
function takeNatives(context: QuickJSContext): Natives {
  const take = (path: string[]) =>
    path.reduce((target, key) => {
      const value = context.getProp(target, key);
      if (target !== context.global) target.dispose();
      return value;
    }, context.global);
  return {
    slice: take(['String', 'prototype', 'slice']),
    stringify: take(['JSON', 'stringify']),
  };
}

function evaluateModule(
  context: QuickJSContext,
  natives: Natives,
  state: RunState,
  job: SandboxJob,
  modulePath: string,
  interrupted: () => boolean,
): SandboxOutcome {
  const fail = (handle: QuickJSHandle) =>
    guestFailure(context, natives, handle, job, state, interrupted());
  const driver = context.evalCode(driverSource(modulePath, job.exportName), 'pal:driver', {
    type: 'global',
  });
  if (driver.error) return fail(driver.error);
  const pal = buildPal(context, natives, state, job);
  const module = hostFunction(context, natives, state, 'module');
  const input = context.newString(job.inputJson);
  const call = context.callFunction(driver.value, context.undefined, pal, module, input);
  for (const handle of [driver.value, pal, module, input]) handle.dispose();
  if (call.error) return fail(call.error);
  const promise = call.value;
  try {
    const pending = context.runtime.executePendingJobs(-1);
    if (pending.error) return fail(pending.error);
    const settled = context.getPromiseState(promise);
    if (settled.type === 'pending')
      return failure(
        'WORKFLOW_ERROR',
        'the workflow returned a promise that never settles',
        [],
        state,
      );
    if (settled.type === 'rejected') return fail(settled.error);
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
            'WORKFLOW_MEMORY',
            `the workflow's result is larger than ${job.maxResultLength} characters of JSON`,
            [],
            state,
            false,
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
function buildPal(
  context: QuickJSContext,
  natives: Natives,
  state: RunState,
  job: SandboxJob,
): QuickJSHandle {
  const pal = context.newObject();
  const set = (target: QuickJSHandle, key: string, value: QuickJSHandle) => {
    context.setProp(target, key, value);
    value.dispose();
  };
  const group = (methods: Record<string, Operation>) => {
    const object = context.newObject();
    for (const [name, op] of Object.entries(methods))
      set(object, name, hostFunction(context, natives, state, op));
    return object;
  };
  set(pal, 'log', hostFunction(context, natives, state, 'log'));
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
    set(
      pal,
      'documents',
      group({
        list: 'documents.list',
        setField: 'documents.setField',
        completed: 'documents.completed',
      }),
    );
  }
  return pal;
}

function hostFunction(
  context: QuickJSContext,
  natives: Natives,
  state: RunState,
  op: Operation,
): QuickJSHandle {
  return context.newFunction(op, (...handles) =>
    toHandle(
      context,
      state.call(
        op,
        handles.map((handle) => readArgument(context, natives, handle)),
      ),
    ),
  );
}

/**
 * An argument of a `pal` method as plain data, never longer than RUN_BOUNDS.argumentLength: a
 * longer string is cut there (the method's own limit then refuses it), a longer object becomes
 * Oversized, without its text being copied out of the sandbox.
 */
function readArgument(context: QuickJSContext, natives: Natives, handle: QuickJSHandle): unknown {
  const type = context.typeof(handle);
  if (type === 'string')
    return readString(context, natives, handle, RUN_BOUNDS.argumentLength).text;
  if (type !== 'object' && type !== 'function') return context.dump(handle);
  if (context.sameValue(handle, context.null)) return null;
  const json = context.callFunction(natives.stringify, context.undefined, handle);
  if (json.error) {
    json.error.dispose();
    return new Unwritable();
  }
  try {
    if (context.typeof(json.value) !== 'string') return undefined;
    const length = stringLength(context, json.value);
    if (length > RUN_BOUNDS.argumentLength) return new Oversized(length);
    return JSON.parse(context.getString(json.value)) as unknown;
  } finally {
    json.value.dispose();
  }
}

/** A guest string's length, read without copying the string (getLength answers objects only). */
function stringLength(context: QuickJSContext, handle: QuickJSHandle): number {
  const length = context.getProp(handle, 'length');
  const size = context.getNumber(length);
  length.dispose();
  return size;
}

/** A guest string's first `max` characters, and its whole length. */
function readString(
  context: QuickJSContext,
  natives: Natives,
  handle: QuickJSHandle,
  max: number,
): { text: string; length: number } {
  const length = stringLength(context, handle);
  if (length <= max) return { text: context.getString(handle), length };
  const [start, end] = [context.newNumber(0), context.newNumber(max)];
  const sliced = context.callFunction(natives.slice, handle, start, end);
  start.dispose();
  end.dispose();
  if (sliced.error) {
    sliced.error.dispose();
    return { text: '', length };
  }
  const text = context.getString(sliced.value);
  sliced.value.dispose();
  return { text, length };
}

/** Plain data (strings, arrays, objects of them) into the guest. */
function toHandle(context: QuickJSContext, value: unknown): QuickJSHandle {
  if (value === undefined) return context.undefined;
  if (value === null) return context.null;
  if (typeof value === 'string') return context.newString(value);
  // pal.documents.list() hands back numbers (positions, recordTime) and booleans (required).
  if (typeof value === 'number') return context.newNumber(value);
  if (typeof value === 'boolean') return value ? context.true : context.false;
  const target = Array.isArray(value) ? context.newArray() : context.newObject();
  for (const [key, item] of Object.entries(value as object)) {
    const handle = toHandle(context, item);
    context.setProp(target, key, handle);
    handle.dispose();
  }
  return target;
}

function guestFailure(
  context: QuickJSContext,
  natives: Natives,
  handle: QuickJSHandle,
  job: SandboxJob,
  state: RunState,
  interrupted: boolean,
): SandboxOutcome {
  const error = readError(context, natives, handle);
  handle.dispose();
  const type = classify(error, interrupted);
  return failure(
    type,
    limitMessage(type, job) ?? `${error.name}: ${error.message}`,
    stackFrames(error.stack, job.modules),
    state,
  );
}

function failure(
  type: FailureType,
  message: string,
  frames: StackFrame[],
  state: RunState,
  // A run that hit a limit may have left the module's memory in a bad way (quickjs-emscripten #257).
  retire = type === 'WORKFLOW_MEMORY' || type === 'WORKFLOW_TIMEOUT',
): SandboxOutcome & { ok: false } {
  return { ok: false, type, message, frames, logs: state.logs, durationMs: 0, retire };
}

/** A thrown value's name, message and stack, each cut to its RUN_BOUNDS length. */
function readError(context: QuickJSContext, natives: Natives, handle: QuickJSHandle): GuestError {
  const { errorNameLength, errorMessageLength, stackLength } = RUN_BOUNDS;
  const type = context.typeof(handle);
  if (type === 'string') {
    const { text, length } = readString(context, natives, handle, errorMessageLength);
    return {
      name: 'thrown value',
      message: cut(text, errorMessageLength, 'message', length),
      stack: '',
    };
  }
  if ((type !== 'object' && type !== 'function') || context.sameValue(handle, context.null))
    return { name: 'thrown value', message: String(context.dump(handle)), stack: '' };
  const property = (key: string, max: number): { text: string; length: number } | undefined => {
    const value = context.getProp(handle, key);
    try {
      if (context.typeof(value) === 'string') return readString(context, natives, value, max);
      if (key !== 'message') return undefined;
      const text = String(readArgument(context, natives, value));
      return { text, length: text.length };
    } finally {
      value.dispose();
    }
  };
  const name = property('name', errorNameLength);
  const message = property('message', errorMessageLength);
  const stack = property('stack', stackLength);
  return {
    name: name ? cut(name.text, errorNameLength, 'name', name.length) : 'Error',
    message: message ? cut(message.text, errorMessageLength, 'message', message.length) : '',
    stack: stack?.text ?? '',
  };
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
  if (type === 'WORKFLOW_TIMEOUT') return timeoutMessage(job);
  if (type === 'WORKFLOW_MEMORY') return memoryMessage(job);
  return undefined;
}

/**
 * QuickJS frames look like `    at approve (workflows/tx.js:12:5)`; the pal's own files only,
 * each named by its module's name in the manifest (`modules`: name → path), as DebugInfo shows it.
 */
export function stackFrames(stack: string, modules: Record<string, string>): StackFrame[] {
  const moduleOf = new Map<string, string>();
  for (const [name, path] of Object.entries(modules))
    if (!moduleOf.has(path)) moduleOf.set(path, name);
  const frames: StackFrame[] = [];
  for (const match of stack.matchAll(/^\s*at (\S+) \(([^():]+):(\d+)(?::\d+)?\)/gm)) {
    const [, functionName, file, line] = match;
    if (file!.startsWith('pal:')) continue;
    frames.push({
      functionName: functionName!,
      module: moduleOf.get(file!) ?? file!,
      line: Number(line),
    });
    if (frames.length === MAX_FRAMES) break;
  }
  return frames;
}
