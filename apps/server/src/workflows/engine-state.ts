// What the workflow engine keeps between runs, on one instance per service (context.ts builds it
// and the context holds it), never at module level: two services in one process (tests, two
// nodes) share no workers, no line of runs and no cached code.
import type { PalDocument } from '../domain/pal-documents.js';
import { KeyedQueue } from './keyed-queue.js';
import type { WorkerPool } from './pool.js';

/** A deployed pal version's workflow code: module name → path, and path → source. */
export interface PalCode {
  modules: Record<string, string>;
  files: Record<string, string>;
  /** A digest of `files` (engine.ts, codeKeyOf): the key of their compiled modules in a worker. */
  codeKey: string;
  /** The version's documents (pal.documents, the session form's checks). */
  documents: PalDocument[];
  /** Whether the manifest asks for uploads (else a run need not look for any). */
  uploads: boolean;
  /**
   * Module name → its export names, read from the text (workflows/module-exports.ts); undefined
   * for a module whose exports only its run can tell.
   */
  exports: Record<string, ReadonlySet<string> | undefined>;
}

/** A deployed pal version never changes: its code is kept, the least recently used dropped first. */
const PAL_CODE_CACHE_SIZE = 256;

export class EngineState {
  /** Runs on one transaction, one after another in this process (engine.ts says why). */
  readonly transactionRuns = new KeyedQueue();
  private readonly palCodes = new Map<string, Promise<PalCode>>();

  constructor(
    /** The sandbox workers that run workflows (threads start at the first run). */
    readonly pool: WorkerPool,
  ) {}

  /** The code of a pal version: kept, or read by `read` (a failed read is not kept). */
  palCode(key: string, read: () => Promise<PalCode>): Promise<PalCode> {
    let code = this.palCodes.get(key);
    if (code) {
      this.palCodes.delete(key);
    } else {
      code = read();
      code.catch(() => this.palCodes.delete(key));
      if (this.palCodes.size >= PAL_CODE_CACHE_SIZE)
        this.palCodes.delete(this.palCodes.keys().next().value!);
    }
    this.palCodes.set(key, code);
    return code;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
