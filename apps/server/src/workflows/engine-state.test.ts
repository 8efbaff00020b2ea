import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EngineState, type PalCode } from './engine-state.js';
import { WorkerPool } from './pool.js';

const pool = () =>
  new WorkerPool({
    size: 1,
    memoryLimitBytes: 1048576,
    backstopGraceMs: 500,
    workerHeapMb: 64,
    log: pino({ level: 'silent' }),
  });
const code = (name: string): PalCode => ({
  modules: { console: name },
  files: {},
  codeKey: name,
  documents: [],
  uploads: false,
  exports: {},
});

describe('EngineState: what the engine keeps, per instance', () => {
  it('reads a pal version once, and two engines keep their own', async () => {
    const reads: string[] = [];
    const read = (who: string) => () => {
      reads.push(who);
      return Promise.resolve(code(who));
    };
    const a = new EngineState(pool());
    const b = new EngineState(pool());
    expect(await a.palCode('p1', read('a'))).toEqual(code('a'));
    expect(await a.palCode('p1', read('a again'))).toEqual(code('a'));
    expect(await b.palCode('p1', read('b'))).toEqual(code('b'));
    expect(reads).toEqual(['a', 'b']);
  });

  it('keeps no failed read: the next run reads again', async () => {
    const state = new EngineState(pool());
    await expect(state.palCode('p1', () => Promise.reject(new Error('gone')))).rejects.toThrow();
    expect(await state.palCode('p1', () => Promise.resolve(code('later')))).toEqual(code('later'));
  });

  it('two engines run the same transaction id on lines of their own', async () => {
    const a = new EngineState(pool());
    const b = new EngineState(pool());
    let releaseA!: () => void;
    const blockedA = a.transactionRuns.run('t1', () => new Promise<void>((r) => (releaseA = r)));
    // b's run on the same id is not queued behind a's.
    await expect(b.transactionRuns.run('t1', () => Promise.resolve('b ran'))).resolves.toBe(
      'b ran',
    );
    releaseA();
    await blockedA;
  });
});
