// One workflow run inside QuickJS. A sandbox is built once per worker: a runtime with the run's
// limits, a context, the driver compiled, the `pal` objects and their host functions. Its WASM
// memory is then copied ("the built state"), and after every run the copy is written back, so
// each run starts from the same state and nothing of one run survives into the next: no global,
// no changed built-in, no module, no pending job (docs/decisions.md, "Workflows": "Every run
// starts from the sandbox's built state"). The time limit is enforced by QuickJS's interrupt
// handler and the memory limit by its allocator, with the WASM memory of the whole module capped
// as well (quickjs-emscripten #255/#271: the allocator limit alone does not bound large strings
// and typed arrays). The wall-clock backstop is the pool's (pool.ts).
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { randomBytes } from 'node:crypto';
import type { FailureType, SandboxJob, SandboxOutcome, StackFrame } from './job.js';
import { Oversized, RunState, Unwritable, type Operation } from './host-api.js';
import { breakdown, limitMessage, RUN_BOUNDS } from './limits.js';
import { cut } from '../text-cut.js';
import { DRIVER_SOURCE } from './driver.js';
import { quickjsLayout, type WasmLayout } from './wasm-layout.js';

const WASM_PAGE = 64 * 1024;
/** Room for QuickJS's own structures beside the heap the guest may fill. */
const WASM_HEADROOM_BYTES = 32 * 1024 * 1024;
const MAX_STACK_BYTES = 512 * 1024;
/** What the C stack is zeroed by, from its top (Sandbox.zeroStack). */
const STACK_CHUNK = 64 * 1024;
const ZERO_CHUNK = Buffer.alloc(STACK_CHUNK);
/** What the build asks for at start. */
const BUILD_INITIAL_BYTES = 16 * 1024 * 1024;
/**
 * A sandbox's memory at start, most of it never touched (pages the kernel backs only once
 * written). Room enough that only a run near its memory limit grows the memory, which retires the
 * worker (see runJob).
 */
const SANDBOX_INITIAL_BYTES = 64 * 1024 * 1024;
/**
 * How deep `pal` methods may nest (a method whose argument's toJSON or getter calls a method,
 * and so on). Each level costs the host's own stack far more than QuickJS's, and an overflow of
 * the host's stack inside the module would unwind C frames without their cleanup.
 */
const MAX_NESTED_CALLS = 32;

/** Whether `error` is V8's: the host's own stack overflowed (inside the module, often). */
export function isHostStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && error.message === 'Maximum call stack size exceeded';
}

interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

// Neither @types/node nor the ES libs the server compiles with declare the WebAssembly global (it
// is typed in TypeScript's DOM lib, left out here); only Memory is needed.
const { Memory } = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory };
  }
).WebAssembly;

/**
 * A QuickJS module whose WASM memory starts at `initialBytes` and can never grow past twice the
 * run's memory limit plus headroom, and that memory. A module is single-threaded: one per worker
 * thread.
 */
async function loadModule(
  memoryLimitBytes: number,
  initialBytes: number,
): Promise<{ quickjs: QuickJSWASMModule; memory: WasmMemory }> {
  const maximum = Math.min(
    65_536,
    Math.ceil((2 * memoryLimitBytes + WASM_HEADROOM_BYTES) / WASM_PAGE),
  );
  const memory = new Memory({
    initial: Math.min(maximum, Math.ceil(initialBytes / WASM_PAGE)),
    maximum,
  });
  const quickjs = await newQuickJSWASMModuleFromVariant(
    newVariant(RELEASE_SYNC, { wasmMemory: memory as never }),
  );
  return { quickjs, memory };
}

/** A QuickJS module for compiling only (workflows/syntax-check.ts). */
export async function loadSandboxModule(memoryLimitBytes: number): Promise<QuickJSWASMModule> {
  return (await loadModule(memoryLimitBytes, BUILD_INITIAL_BYTES)).quickjs;
}

/** The name of the module compileSource writes. */
export const COMPILE_MODULE = 'pal:compile';

/**
 * The module a compile imports last, which the loader refuses: the compile stops there, every
 * module before it loaded (compiled) and none linked or run (compileSource).
 */
export const END_OF_COMPILE = 'pal:end-of-compile';

/**
 * The source of a module that compiles `paths`, and what they import, through the module loader,
 * and runs none of it: it imports each path, then END_OF_COMPILE, which the loader must refuse. A
 * loader that was asked for END_OF_COMPILE knows that everything before it compiled. (Not
 * quickjs-emscripten's own compile-only evaluation of a module: after compiling, QTS_Eval of 0.32
 * reads the module's record through an uninitialized pointer, which in this build points into
 * the module's source, so the source's own bytes could pass for a record.)
 */
function compileSource(paths: readonly string[]): string {
  return [...paths, END_OF_COMPILE].map((path) => `import ${JSON.stringify(path)};\n`).join('');
}

/** A compile through the module loader: whether it got to END_OF_COMPILE. */
export interface LoaderCompile {
  ended: boolean;
}

/**
 * Compiles `paths` and what they import through `context`'s module loader, running none of it
 * (compileSource). The loader must answer each name with endOfCompile first; `compile.ended`
 * then tells whether everything compiled (the result is an error either way).
 */
export function compileThroughLoader(
  context: QuickJSContext,
  paths: readonly string[],
  compile: LoaderCompile,
): ReturnType<QuickJSContext['evalCode']> {
  compile.ended = false;
  return context.evalCode(compileSource(paths), COMPILE_MODULE, { type: 'module' });
}

/** The loader's refusal of END_OF_COMPILE during `compile` (which it marks ended); else undefined. */
export function endOfCompile(
  name: string,
  compile: LoaderCompile | undefined,
): { error: Error } | undefined {
  if (compile === undefined || name !== END_OF_COMPILE) return undefined;
  compile.ended = true;
  return { error: new Error('the end of the compile') };
}

/**
 * Resolves `./x.js` and `../x.js` against the importing module's path; bare names stay as they
 * are, but for the compile's own two (compileSource): only the compile may import
 * END_OF_COMPILE, and no module may import the compile, which QuickJS frees once it stops (a
 * pal's module that imported it kept a pointer to freed memory in every run, found in review).
 * Their names asked for by anyone else become a name no pal has.
 */
export function normalizeModuleName(base: string, requested: string): string {
  const name = resolveModuleName(base, requested);
  const reserved = name === COMPILE_MODULE || name === END_OF_COMPILE;
  return reserved && !(base === COMPILE_MODULE && name === END_OF_COMPILE)
    ? `${name} (the host's)`
    : name;
}

function resolveModuleName(base: string, requested: string): string {
  if (!requested.startsWith('./') && !requested.startsWith('../')) return requested;
  const parts = base.split('/').slice(0, -1);
  for (const part of requested.split('/')) {
    if (part === '..') {
      // Past the pal's folder: a name no file has, which says so (missingModule).
      if (parts.length === 0) return `${requested}${OUTSIDE_THE_PAL}`;
      parts.pop();
    } else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}

const OUTSIDE_THE_PAL = ' (outside the pal folder)';

/** Why no module answers to `name` (as resolved), in words the pal's author can act on. */
export function missingModule(name: string, has: (path: string) => boolean): string {
  if (name.endsWith(OUTSIDE_THE_PAL))
    return `import "${name.slice(0, -OUTSIDE_THE_PAL.length)}" leads outside the pal folder`;
  if (has(`${name}.js`))
    return `no module "${name}" in this pal: an import names the file with its ".js" ("${name}.js")`;
  return `no module "${name}" in this pal (only the files its manifest names)`;
}

/**
 * The files of a version that a module can be asked for by: every path but those no import
 * resolves to (a relative one, or a name of the compile's), which a run could never load.
 */
export function importablePaths(files: Record<string, string>): string[] {
  // As a module of the pal names it: a relative path resolves to another name, and the
  // compile's own names become the host's.
  return Object.keys(files).filter((path) => normalizeModuleName('', path) === path);
}

interface GuestError {
  name: string;
  message: string;
  stack: string;
}

/**
 * Built-in functions taken from the context before any guest code runs. A workflow may replace
 * `String.prototype.slice` or `JSON.stringify`, never these function objects: the host reads what
 * the guest hands it through them, never whole when it is too long.
 */
interface Natives {
  slice: QuickJSHandle;
  stringify: QuickJSHandle;
  parse: QuickJSHandle;
  /** Reads an error's own `message` without running a getter of it (outOfMemory). */
  getOwnPropertyDescriptor: QuickJSHandle;
  /** The getters of `pal.transaction`, and a value's own `__proto__` key (defineInGuest). */
  defineProperty: QuickJSHandle;
}

const MAX_FRAMES = 20;

/** What the host functions of a run read and write: the run's job, its state, its deadline. */
interface Run {
  job: SandboxJob;
  state: RunState;
  deadline: number;
  interrupted: boolean;
  /**
   * The guest ran out of memory in code the host called while reading one of its values (a
   * getter, a toJSON): the host saw that error, the workflow never did.
   */
  outOfMemory: boolean;
}

/** The copy of what the built sandbox holds in its WASM memory: its static part and its heap. */
interface BuiltState {
  statics: Uint8Array;
  heap: Uint8Array;
}

/** What a version that keeps no state counts for in the budget, so that such entries are bounded. */
const NOT_KEPT_BYTES = 1024;

/** A pal version a sandbox keeps: the state its runs start from, and its files. */
interface KeptVersion {
  /** The built state with every module of the version compiled. */
  state: BuiltState;
  /** For its runs sent without them (workflows/pool.ts sends a worker a version's files once). */
  files: Record<string, string>;
}

function sizeOf(kept: KeptVersion | null): number {
  if (!kept) return NOT_KEPT_BYTES;
  let bytes = kept.state.statics.length + kept.state.heap.length;
  for (const [path, text] of Object.entries(kept.files)) bytes += 2 * (path.length + text.length);
  return bytes;
}

/**
 * A QuickJS runtime and context built once, run many times: before each run its memory is what
 * it was when it was built. One per worker thread; after a run that may have damaged it (see
 * `retire` in SandboxOutcome) the worker and its sandbox are replaced.
 */
export class Sandbox {
  private readonly context: QuickJSContext;
  private run: Run | undefined;
  private readonly natives: Natives;
  private readonly driver: QuickJSHandle;
  private readonly moduleOf: QuickJSHandle;
  private readonly pals: { console: QuickJSHandle; transaction: QuickJSHandle };
  /** Every host function, kept alive so that no run can have one collected (and forgotten). */
  private readonly hostFunctions: QuickJSHandle[] = [];
  private readonly built: BuiltState;
  /**
   * Per pal version (`SandboxJob.codeKey`): the built state with every module of the version
   * compiled and none run; null when they did not all compile or the state is larger than the
   * budget (its runs start from the built state and compile the version first). A run imports
   * them as compiled; what it runs of them is gone when the state is written back, as everything
   * else of the run is.
   */
  private readonly codeStates = new Map<string, KeptVersion | null>();
  /** Versions with a state dropped for room since takeDropped() was last asked (the pool's). */
  private dropped: string[] = [];
  private codeStatesKept = 0;
  /** The files being compiled now (versionCompiled), and whether the compile got to its end. */
  private compiling: (LoaderCompile & { files: Record<string, string> }) | undefined;
  /** The state the memory holds, or held before the run that made it dirty. */
  private memoryState: BuiltState;
  /** A run has run since the current state was last written back. */
  private dirty = false;
  /** `pal` methods running now, one inside another's argument. */
  private depth = 0;
  /** The WASM module itself failed: the sandbox takes no further run. */
  private failed = false;

  /**
   * `codeStatesBytes`: what the states with a pal version's modules compiled (`codeStates`) may
   * take, in bytes of their copies (WORKFLOW_CODE_CACHE_MB), the least recently used dropped first.
   */
  static async create(memoryLimitBytes: number, codeStatesBytes: number): Promise<Sandbox> {
    const { quickjs, memory } = await loadModule(memoryLimitBytes, SANDBOX_INITIAL_BYTES);
    return new Sandbox(quickjs, memory, memoryLimitBytes, quickjsLayout(), codeStatesBytes);
  }

  private constructor(
    quickjs: QuickJSWASMModule,
    private readonly memory: WasmMemory,
    private readonly memoryLimitBytes: number,
    private readonly layout: WasmLayout,
    private readonly codeStatesBytes: number,
  ) {
    const runtime: QuickJSRuntime = quickjs.newRuntime({
      memoryLimitBytes,
      maxStackSizeBytes: MAX_STACK_BYTES,
      interruptHandler: () => this.interrupt(),
    });
    runtime.setModuleLoader(
      (name) => {
        // Only a compile loads modules: a run's code starts with every module of its version
        // compiled (versionCompiled), so what it imports is found loaded or not at all. Why no
        // load may happen while a pal's code runs: see versionCompiled.
        const compiling = this.compiling;
        const refused = (files: Record<string, string>) => ({
          error: new Error(missingModule(name, (path) => Object.hasOwn(files, path))),
        });
        if (compiling === undefined) return refused({});
        return (
          endOfCompile(name, compiling) ??
          (Object.hasOwn(compiling.files, name) ? compiling.files[name]! : refused(compiling.files))
        );
      },
      (base, requested) => normalizeModuleName(base, requested),
    );
    const context = runtime.newContext();
    this.context = context;
    // The cached handles a run uses, made now so that they live in the built state.
    void [context.undefined, context.null, context.true, context.false, context.global];
    this.natives = takeNatives(context);
    const driver = context.evalCode(DRIVER_SOURCE, 'pal:driver', { type: 'global' });
    if (driver.error) {
      const message = context.dump(driver.error) as unknown;
      driver.error.dispose();
      throw new Error(`the sandbox's driver does not compile: ${JSON.stringify(message)}`);
    }
    this.driver = driver.value;
    this.moduleOf = this.hostFunction('module');
    this.pals = { console: this.buildPal(false), transaction: this.buildPal(true) };
    this.built = this.copyBuiltState();
    this.memoryState = this.built;
    // The break lies past every byte the allocator wrote (the last page with one ends the built
    // heap), and inside the memory.
    const builtEnd = layout.stackTop + this.built.heap.length;
    if (!(this.heapBreak > builtEnd - WASM_PAGE && this.heapBreak <= this.memoryBytes))
      throw new Error("the sandbox's heap break is not where the QuickJS build keeps it");
  }

  /**
   * One run, from the built state or its version's (`codeKey`), written back first if a run has
   * run since it was.
   */
  runJob(job: SandboxJob): SandboxOutcome {
    const started = performance.now();
    // Taken before the version's state is made: a compile that grows the memory retires the
    // worker as a run that does (see below).
    const memoryBefore = this.memoryBytes;
    if (this.failed) return sandboxFailed(new RunState(job));
    let start: { state: BuiltState; compiled: boolean };
    try {
      start = this.stateFor(job);
      this.startFrom(start.state);
    } catch {
      // The host failed inside the module while it compiled the version (trusted() marked it).
      this.failed = true;
      return sandboxFailed(new RunState(job));
    }
    this.dirty = true;
    const run: Run = {
      job,
      state: new RunState(job),
      deadline: Date.now() + job.timeoutMs,
      interrupted: false,
      outOfMemory: false,
    };
    this.run = run;
    let outcome: SandboxOutcome;
    try {
      if (job.memoryBytes !== this.memoryLimitBytes)
        this.context.runtime.setMemoryLimit(job.memoryBytes);
      outcome = this.evaluate(run, start.compiled);
    } catch (error) {
      // The WASM module itself failed (it ran out of its capped memory, most likely). A trap
      // leaves the module's stack pointer where it was: no written-back state can mend that.
      this.failed = true;
      const { type, message } = breakdown(
        job,
        error instanceof Error ? error.message : String(error),
      );
      outcome = { ...failure(type, message, [], run.state), retire: true };
    } finally {
      this.run = undefined;
    }
    // The host failed inside one of the run's `pal` calls, whatever the workflow made of the
    // error it saw there.
    if (this.failed && (outcome.ok || outcome.retire !== true)) outcome = sandboxFailed(run.state);
    // A limit broken where the workflow could not see it, in guest code a host call ran (a getter
    // or a toJSON of a pal method's argument), is the run's failure too: interrupted, the guest
    // goes on only to the next point where QuickJS asks, which a short tail never reaches.
    // So is an error the guest made of the interruption (caught in a promise job, then thrown
    // as its own): QuickJS's interruption cannot be caught, as far as the run's outcome goes.
    if (run.interrupted && (outcome.ok || outcome.type === 'WORKFLOW_ERROR') && !this.failed)
      outcome = failure('WORKFLOW_TIMEOUT', limitMessage('WORKFLOW_TIMEOUT', job), [], run.state);
    if (run.outOfMemory && (outcome.ok || outcome.type !== 'WORKFLOW_MEMORY'))
      outcome = failure('WORKFLOW_MEMORY', limitMessage('WORKFLOW_MEMORY', job), [], run.state);
    // A broken bound is the run's failure, whatever the workflow did after it (caught the
    // RangeError and returned, or went on until its time limit).
    if (run.state.broken !== undefined)
      outcome = {
        ...failure('WORKFLOW_MEMORY', run.state.broken, [], run.state, false),
        retire: !outcome.ok && outcome.retire === true,
      };
    // A module never gives back memory it grew, and quickjs-emscripten's job runner reads its
    // answer through a view that growing the memory detaches (it then makes a context of its
    // own, which the written-back state would leave behind): the worker is replaced.
    if (this.memoryBytes !== memoryBefore) outcome.retire = true;
    outcome.durationMs = performance.now() - started;
    return outcome;
  }

  /**
   * Writes back the state the last run started from, if a run has run since (a worker does it
   * while it waits: the next run is most often of the same pal version).
   */
  restore(): void {
    if (this.dirty) this.write(this.memoryState);
  }

  private startFrom(state: BuiltState): void {
    if (this.dirty || state !== this.memoryState) this.write(state);
  }

  /**
   * Writes `state` back, and zeroes what lies past its heap up to the heap's break before the
   * write: what the runs since the last write allocated, and what a larger state held there
   * (another version's compiled modules). So past the heap of the state the memory holds there is
   * nothing but zeros whenever no run is running: a run that could read free memory (through a
   * flaw of QuickJS's) finds there nothing of another run, and no other version's code. The C
   * stack's frames are zeroed too (zeroStack).
   */
  private write(state: BuiltState): void {
    const memory = new Uint8Array(this.memory.buffer);
    const heapBreak = Math.min(this.heapBreak, memory.length);
    memory.set(state.statics, 0);
    memory.set(state.heap, this.layout.stackTop);
    const end = this.layout.stackTop + state.heap.length;
    if (heapBreak > end) memory.fill(0, end, heapBreak);
    this.zeroStack(memory);
    this.memoryState = state;
    this.dirty = false;
  }

  /**
   * Zeroes the C stack where runs left their frames (nothing on it is live between calls): its
   * top STACK_CHUNK, where every call's frames begin, then each chunk below while it holds a
   * non-zero byte. Below a chunk of zeros the stack is taken to be as zeroed before: a run whose
   * frames left a whole chunk of zeros and went deeper leaves what lies below it.
   */
  private zeroStack(memory: Uint8Array): void {
    const { stackLow, stackTop } = this.layout;
    let start = Math.max(stackLow, stackTop - STACK_CHUNK);
    memory.fill(0, start, stackTop);
    while (start > stackLow) {
      const end = start;
      start = Math.max(stackLow, end - STACK_CHUNK);
      const chunk = memory.subarray(start, end);
      if (ZERO_CHUNK.subarray(0, chunk.length).equals(chunk)) break;
      chunk.fill(0);
    }
  }

  /**
   * The heap's break (emscripten's `sbrk`, wasm-layout.ts): the allocator has never handed out
   * memory past it, so a run wrote nothing on the heap past it.
   */
  private get heapBreak(): number {
    return new DataView(this.memory.buffer).getUint32(this.layout.breakAddress, true);
  }

  /**
   * The state a run of `job` starts from: its version's, with every module compiled, or the
   * built state, in which the run compiles them first.
   */
  private stateFor(job: SandboxJob): { state: BuiltState; compiled: boolean } {
    const key = job.codeKey;
    if (key === undefined || this.codeStatesBytes === 0)
      return { state: this.built, compiled: false };
    let kept = this.codeStates.get(key);
    if (kept !== undefined) {
      this.codeStates.delete(key);
      this.codeStates.set(key, kept);
    } else {
      const state = this.codeState(job.files);
      kept = state && { state, files: job.files };
      // One larger than the whole budget is not kept, nor run from: its runs, this one too, start
      // from the built state (the memory holds no copy beyond the budget).
      if (kept && sizeOf(kept) > this.codeStatesBytes) kept = null;
      this.keepCodeState(key, kept);
    }
    return kept ? { state: kept.state, compiled: true } : { state: this.built, compiled: false };
  }

  /**
   * The files of a pal version whose modules this sandbox keeps compiled, for a run sent without
   * them; undefined when it keeps none of the version.
   */
  keptFiles(codeKey: string | undefined): Record<string, string> | undefined {
    return codeKey === undefined ? undefined : (this.codeStates.get(codeKey)?.files ?? undefined);
  }

  /**
   * The built state with every module of `files` compiled; null when one does not compile.
   * Compiling runs none of the pal's code, so the state holds nothing of any run.
   */
  private codeState(files: Record<string, string>): BuiltState | null {
    // Written back, the memory is the built state as it was made, zeros past its heap (write):
    // the copy below holds the compiled modules and no more.
    this.startFrom(this.built);
    const compiled = this.versionCompiled(files);
    compiled.error?.dispose();
    // Some modules may have compiled: the memory is not the built state any more.
    this.dirty = true;
    if (compiled.error) return null;
    const state = this.copyBuiltState();
    this.memoryState = state;
    this.dirty = false;
    return state;
  }

  /**
   * Compiles every module of a version through the module loader (compileSource), before any of
   * its code runs: no error when all compiled, else the compile's. The module loader answers only
   * a compile, so a run's code never has a module loaded: QuickJS (2025-09-13, in
   * quickjs-emscripten 0.32) leaves a module whose imports failed to load marked resolved with a
   * missing import, and a later import that reaches it links through a null or freed record. A
   * workflow could bring that about by catching the failed import of a module in an import cycle
   * (it ran out of memory while that compiled, say) and importing another module of the cycle:
   * the WASM aborted, or worse. With every module compiled first, an import finds its module
   * loaded, or fails before any module is made.
   */
  private versionCompiled(files: Record<string, string>): { error?: QuickJSHandle } {
    const compiling = { files, ended: false };
    this.compiling = compiling;
    try {
      const result = this.trusted(() =>
        compileThroughLoader(this.context, importablePaths(files), compiling),
      );
      if (!compiling.ended && result.error) return { error: result.error };
      result.dispose();
      return {};
    } finally {
      this.compiling = undefined;
    }
  }

  private keepCodeState(key: string, kept: KeptVersion | null): void {
    const bytes = sizeOf(kept);
    for (const [oldest, old] of this.codeStates) {
      if (this.codeStatesKept + bytes <= this.codeStatesBytes) break;
      this.codeStates.delete(oldest);
      this.codeStatesKept -= sizeOf(old);
      if (old) this.dropped.push(oldest);
    }
    this.codeStates.set(key, kept);
    this.codeStatesKept += bytes;
  }

  /** The versions whose kept state was dropped for room since this was last asked. */
  takeDropped(): string[] {
    const dropped = this.dropped;
    this.dropped = [];
    return dropped;
  }

  /**
   * The pal versions (their keys) whose state this sandbox keeps, least recently used first:
   * their size in bytes (the state and the files), or null for one that keeps none (its modules
   * did not all compile, or its state is larger than the budget).
   */
  get keptCode(): { key: string; bytes: number | null }[] {
    return [...this.codeStates].map(([key, kept]) => ({
      key,
      bytes: kept ? sizeOf(kept) : null,
    }));
  }

  /** Whether the memory holds `text`'s bytes (Latin-1, as QuickJS keeps such strings). For tests. */
  memoryHolds(text: string): boolean {
    return Buffer.from(this.memory.buffer).includes(Buffer.from(text, 'latin1'));
  }

  /**
   * Bytes past the heap of the state the memory holds, up to the end of the last page with a
   * non-zero byte: 0 whenever the state is written back (write). For tests.
   */
  get bytesWrittenPastState(): number {
    return Math.max(0, this.writtenEnd() - this.layout.stackTop - this.memoryState.heap.length);
  }

  /** How large the module's WASM memory has grown, in bytes. */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  private current(): Run {
    if (!this.run) throw new Error('a host function was called outside a run');
    return this.run;
  }

  private interrupt(): boolean {
    const run = this.run;
    if (!run) return false;
    // A failed module runs no more of the guest than it must.
    if (this.failed) return true;
    run.interrupted ||= Date.now() > run.deadline;
    return run.interrupted;
  }

  /**
   * The memory below the stack and the heap up to its last byte in use. The heap's allocator
   * keeps its chunks below its top chunk, whose header is written, so nothing in use lies past the
   * last non-zero byte; what a run writes past it is free memory, as a freed chunk is.
   */
  private copyBuiltState(): BuiltState {
    const memory = new Uint8Array(this.memory.buffer);
    return {
      statics: memory.slice(0, this.layout.stackLow),
      heap: memory.slice(this.layout.stackTop, this.writtenEnd()),
    };
  }

  /**
   * The end of the last page with a non-zero byte, found a page at a time (Buffer's memcmp, not
   * a loop over words): nothing rests on where inside that page the last byte is.
   */
  private writtenEnd(): number {
    const pages = Buffer.from(this.memory.buffer);
    const zeroPage = Buffer.alloc(WASM_PAGE);
    let end = pages.length;
    while (end > this.layout.stackTop && pages.subarray(end - WASM_PAGE, end).equals(zeroPage))
      end -= WASM_PAGE;
    return end;
  }

  private evaluate(run: Run, compiled: boolean): SandboxOutcome {
    const { job, state } = run;
    const context = this.context;
    const modulePath = Object.hasOwn(job.modules, job.module) ? job.modules[job.module] : undefined;
    if (modulePath === undefined || !Object.hasOwn(job.files, modulePath))
      return failure('NO_WORKFLOW', `the pal has no workflow module "${job.module}"`, [], state);
    // Whether the run was interrupted is asked after the error is read: reading it runs the
    // guest's getters, which may reach the time limit themselves.
    const fail = (handle: QuickJSHandle) =>
      guestFailure(context, this.natives, handle, job, state, () => run.interrupted);
    if (!compiled) {
      const { error } = this.versionCompiled(job.files);
      if (error) return fail(error);
    }
    const pal = job.transaction ? this.pals.transaction : this.pals.console;
    const input = context.newString(job.inputJson);
    const path = context.newString(modulePath);
    const exportName = context.newString(job.exportName);
    const seed = context.newString(randomBytes(16).toString('hex'));
    const call = context.callFunction(
      this.driver,
      context.undefined,
      pal,
      this.moduleOf,
      input,
      path,
      exportName,
      seed,
    );
    for (const handle of [input, path, exportName, seed]) handle.dispose();
    if (call.error) return fail(call.error);
    const promise = call.value;
    try {
      const pending = context.runtime.executePendingJobs(-1);
      if (pending.error) return fail(pending.error);
      const settled = context.getPromiseState(promise);
      // Interrupted in a promise job, QuickJS rejects that job's promise, which the guest may
      // catch and go on from; whatever it then comes to, the run reached its time limit.
      if (settled.type === 'pending' && !run.interrupted)
        return failure(
          'WORKFLOW_ERROR',
          'the workflow returned a promise that never settles',
          [],
          state,
        );
      if (settled.type === 'pending')
        return failure('WORKFLOW_TIMEOUT', limitMessage('WORKFLOW_TIMEOUT', job), [], state);
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
        // The return value's JSON text (the driver stringified it), or undefined for nothing.
        let value: string | undefined;
        if (type === 'string') {
          if (stringLength(context, result) > job.maxResultLength)
            return failure(
              'WORKFLOW_MEMORY',
              `the workflow's result is larger than ${job.maxResultLength} characters of JSON`,
              [],
              state,
              false,
            );
          value = context.getString(result);
        }
        return { ok: true, value, effects: state.effects, logs: state.logs, durationMs: 0 };
      } finally {
        result.dispose();
      }
    } finally {
      promise.dispose();
    }
  }

  /**
   * The host's own reading or writing of guest values: if it throws, it failed inside the module
   * (or the host's stack overflowed there), and the module's state cannot be trusted.
   */
  private trusted<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      this.failed = true;
      throw error;
    }
  }

  /**
   * A `pal` object without `call` (the driver adds it): host functions over the current run's
   * RunState. Two are built, one for console runs and one with the transaction's parts.
   */
  private buildPal(withTransaction: boolean): QuickJSHandle {
    const context = this.context;
    const pal = context.newObject();
    const set = (target: QuickJSHandle, key: string, value: QuickJSHandle) => {
      context.setProp(target, key, value);
      value.dispose();
    };
    const group = (methods: Record<string, Operation>) => {
      const object = context.newObject();
      for (const [name, op] of Object.entries(methods)) set(object, name, this.hostFunction(op));
      return object;
    };
    set(pal, 'log', this.hostFunction('log'));
    set(pal, 'vars', group({ get: 'vars.get', set: 'vars.set', all: 'vars.all' }));
    set(
      pal,
      'roles',
      group({ assign: 'roles.assign', remove: 'roles.remove', list: 'roles.list' }),
    );
    set(pal, 'mail', group({ send: 'mail.send' }));
    if (withTransaction) {
      const transaction = group({ setStatus: 'tx.setStatus' });
      for (const event of ['complete', 'cancel'])
        set(transaction, event, this.hostFunction('tx.move', event, [event]));
      for (const field of ['id', 'palId', 'status', 'systemStatus', 'webServiceStatus']) {
        const get = this.hostFunction('tx.get', field, [field]);
        // A getter made from the handle, kept: defineProp's own `get` would make a function that
        // nothing here holds.
        defineInGuest(context, this.natives, transaction, field, { get, enumerable: context.true });
        get.dispose();
      }
      set(pal, 'transaction', transaction);
      set(
        pal,
        'documents',
        group({
          list: 'documents.list',
          setField: 'documents.setField',
          clearSignature: 'documents.clearSignature',
          completed: 'documents.completed',
          uploads: 'documents.uploads',
        }),
      );
    }
    return pal;
  }

  /**
   * A host function for `op` (named `name` in the guest); `fixed` are its arguments when it takes
   * none of the guest's. It is kept alive with the sandbox, and returns a new handle (disposed).
   */
  private hostFunction(op: Operation, name: string = op, fixed?: unknown[]): QuickJSHandle {
    const context = this.context;
    const handle = context.newFunction(name, (...handles) => {
      const { state } = this.current();
      if (this.depth >= MAX_NESTED_CALLS)
        throw new RangeError(`pal methods may nest at most ${MAX_NESTED_CALLS} deep`);
      this.depth += 1;
      try {
        const args = this.trusted(
          () => fixed ?? handles.map((h) => readArgument(context, this.natives, h)),
        );
        if (args.some((a) => a instanceof Unwritable && a.outOfMemory))
          this.current().outOfMemory = true;
        let value: unknown;
        try {
          value = state.call(op, args);
        } catch (error) {
          // RunState's TypeError or RangeError reaches the workflow, which may catch it.
          if (isHostStackOverflow(error)) this.failed = true;
          throw error;
        }
        return this.trusted(() => toHandle(context, this.natives, value));
      } finally {
        this.depth -= 1;
      }
    });
    this.hostFunctions.push(handle.dup());
    return handle;
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
    parse: take(['JSON', 'parse']),
    getOwnPropertyDescriptor: take(['Object', 'getOwnPropertyDescriptor']),
    defineProperty: take(['Object', 'defineProperty']),
  };
}

/**
 * An argument of a `pal` method as plain data, never longer than RUN_BOUNDS.argumentLength: a
 * longer string is cut there (the method's own limit then refuses it), a longer object becomes
 * Oversized, without its text being copied out of the sandbox.
 */
function readArgument(context: QuickJSContext, natives: Natives, handle: QuickJSHandle): unknown {
  const type = context.typeof(handle);
  if (type === 'string') {
    const read = readString(context, natives, handle, RUN_BOUNDS.argumentLength);
    // Not read whole only when the guest's memory ran out on the way (slicing it, or spelling it
    // as JSON): as a toJSON that fills it, never a string cut short.
    return read.whole ? read.text : new Unwritable(true);
  }
  // As JSON.stringify has them: a symbol is no value, a BigInt has no JSON. Neither is copied out
  // (a symbol's description or a BigInt's digits may be millions of characters, and writing a
  // BigInt's digits is host work no time limit interrupts).
  if (type === 'symbol') return undefined;
  if (type === 'bigint') return new Unwritable(false);
  if (type !== 'object' && type !== 'function') return context.dump(handle);
  if (context.sameValue(handle, context.null)) return null;
  const json = context.callFunction(natives.stringify, context.undefined, handle);
  if (json.error) {
    // Whatever the guest's code threw in there; running out of memory is kept as such (a time
    // limit needs no mark: the run is interrupted).
    const oom = outOfMemory(context, natives, json.error);
    json.error.dispose();
    return new Unwritable(oom);
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

/**
 * Whether a thrown value is QuickJS's out-of-memory error (or its "string too long"), read from
 * its own `message` data property: no getter, toJSON or nested argument of the guest's runs here
 * (reading the error as readError does would recurse through readArgument without end).
 */
function outOfMemory(context: QuickJSContext, natives: Natives, handle: QuickJSHandle): boolean {
  if (context.typeof(handle) !== 'object' || context.sameValue(handle, context.null)) return false;
  const key = context.newString('message');
  const descriptor = context.callFunction(
    natives.getOwnPropertyDescriptor,
    context.undefined,
    handle,
    key,
  );
  key.dispose();
  if (descriptor.error) {
    descriptor.error.dispose();
    return false;
  }
  try {
    if (context.typeof(descriptor.value) !== 'object') return false;
    const message = context.getProp(descriptor.value, 'value');
    try {
      if (context.typeof(message) !== 'string') return false;
      const { text } = readString(context, natives, message, 20);
      return OUT_OF_MEMORY_MESSAGES.has(text);
    } finally {
      message.dispose();
    }
  } finally {
    descriptor.value.dispose();
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
): { text: string; length: number; whole: boolean } {
  const length = stringLength(context, handle);
  if (length <= max) return { ...wholeString(context, natives, handle, length), length };
  const [start, end] = [context.newNumber(0), context.newNumber(max)];
  const sliced = context.callFunction(natives.slice, handle, start, end);
  start.dispose();
  end.dispose();
  if (sliced.error) {
    sliced.error.dispose();
    return { text: '', length, whole: false };
  }
  const read = wholeString(context, natives, sliced.value, max);
  sliced.value.dispose();
  return { ...read, length };
}

/**
 * A guest string of `length` characters, exactly. The memory between the two sides holds C
 * strings of UTF-8: a NUL ends one early, and a lone surrogate cannot be written in UTF-8 (it
 * comes back as U+FFFD). Such a string (its length differs, or it reads with a U+FFFD) is read
 * again as its JSON text, which spells both with escapes. `whole` is false when that could not
 * be made (the guest's memory is full): `text` is then cut short, and no argument.
 */
function wholeString(
  context: QuickJSContext,
  natives: Natives,
  handle: QuickJSHandle,
  length: number,
): { text: string; whole: boolean } {
  const text = context.getString(handle);
  if (text.length === length && !text.includes('\uFFFD')) return { text, whole: true };
  const json = context.callFunction(natives.stringify, context.undefined, handle);
  if (json.error) {
    json.error.dispose();
    return { text, whole: false };
  }
  try {
    return { text: JSON.parse(context.getString(json.value)) as string, whole: true };
  } finally {
    json.value.dispose();
  }
}

/** A NUL, or a surrogate not in a pair: what a C string of UTF-8 cannot carry. */
const NOT_IN_C_STRINGS =
  /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A host string in the guest, exactly (see wholeString). */
function guestString(context: QuickJSContext, natives: Natives, text: string): QuickJSHandle {
  if (!NOT_IN_C_STRINGS.test(text)) return context.newString(text);
  const json = context.newString(JSON.stringify(text));
  const parsed = context.callFunction(natives.parse, context.undefined, json);
  json.dispose();
  return context.unwrapResult(parsed);
}

/** Plain data (strings, arrays, objects of them) into the guest. */
function toHandle(context: QuickJSContext, natives: Natives, value: unknown): QuickJSHandle {
  if (value === undefined) return context.undefined;
  if (value === null) return context.null;
  if (typeof value === 'string') return guestString(context, natives, value);
  // pal.documents.list() hands back numbers (positions, recordTime) and booleans (required).
  if (typeof value === 'number') return context.newNumber(value);
  if (typeof value === 'boolean') return value ? context.true : context.false;
  const target = Array.isArray(value) ? context.newArray() : context.newObject();
  for (const [key, item] of Object.entries(value as object)) {
    const handle = toHandle(context, natives, item);
    if (key === '__proto__') {
      const yes = context.true;
      const own = { value: handle, writable: yes, enumerable: yes, configurable: yes };
      defineInGuest(context, natives, target, key, own);
    } else context.setProp(target, key, handle);
    handle.dispose();
  }
  return target;
}

/**
 * Object.defineProperty in the guest, with the context's own (a pal cannot have replaced it);
 * the descriptor's handles stay the caller's. toHandle defines a value's `__proto__` key so, as
 * JSON.parse does: setProp assigns, and assigning `__proto__` (a variable may be so named:
 * pal.vars.all) sets the prototype instead, or nothing.
 */
function defineInGuest(
  context: QuickJSContext,
  natives: Natives,
  target: QuickJSHandle,
  key: string,
  members: Record<string, QuickJSHandle>,
): void {
  const descriptor = context.newObject();
  for (const [member, handle] of Object.entries(members))
    context.setProp(descriptor, member, handle);
  const name = context.newString(key);
  const defined = context.callFunction(
    natives.defineProperty,
    context.undefined,
    target,
    name,
    descriptor,
  );
  name.dispose();
  descriptor.dispose();
  if (defined.error) {
    defined.error.dispose();
    throw new Error(`the sandbox cannot define "${key}"`);
  }
  defined.value.dispose();
}

function guestFailure(
  context: QuickJSContext,
  natives: Natives,
  handle: QuickJSHandle,
  job: SandboxJob,
  state: RunState,
  interrupted: () => boolean,
): SandboxOutcome {
  const error = readError(context, natives, handle);
  handle.dispose();
  const type = classify(error, interrupted());
  return failure(
    type,
    type === 'WORKFLOW_TIMEOUT' || type === 'WORKFLOW_MEMORY'
      ? limitMessage(type, job)
      : `${error.name}: ${error.message}`,
    stackFrames(error.stack, job.modules),
    state,
  );
}

/** The run of a sandbox whose module failed: its worker retires. */
function sandboxFailed(state: RunState): SandboxOutcome {
  return { ...failure('WORKFLOW_ERROR', 'the sandbox failed', [], state), retire: true };
}

function failure(
  type: FailureType,
  message: string,
  frames: StackFrame[],
  state: RunState,
  // A run that ran out of memory has grown the module's WASM memory toward its cap, which a
  // module never gives back: its worker is replaced. After any other failure the built state,
  // written back, is the whole of the sandbox again.
  retire = type === 'WORKFLOW_MEMORY',
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
  // A symbol or a BigInt is named, not copied out whole (see readArgument).
  if (type === 'symbol' || type === 'bigint')
    return {
      name: 'thrown value',
      message: `a ${type === 'symbol' ? 'Symbol' : 'BigInt'}`,
      stack: '',
    };
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

/**
 * QuickJS's messages for memory it would not grant. "string too long": its own cap on one string,
 * reached before the allocator's limit because that limit does not count large strings
 * (quickjs-emscripten #271).
 */
const OUT_OF_MEMORY_MESSAGES = new Set(['out of memory', 'string too long']);

function classify(error: GuestError, interrupted: boolean): FailureType {
  if (interrupted || (error.name === 'InternalError' && error.message === 'interrupted'))
    return 'WORKFLOW_TIMEOUT';
  if (error.name === 'InternalError' && OUT_OF_MEMORY_MESSAGES.has(error.message))
    return 'WORKFLOW_MEMORY';
  return 'WORKFLOW_ERROR';
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
