// Where a bench server's CPU goes, thread by thread (Linux: /proc/<pid>/task/<tid>/stat), so that
// a figure missed on these 2 shared cores can be estimated for a machine with more: the event
// loop is one thread whatever the cores, the sandbox workers and libuv's pool are not.
import { readdirSync, readFileSync } from 'node:fs';

/** CPU milliseconds used so far by each kind of thread of a process. */
export interface ThreadCpu {
  /** The event loop: HTTP, the service's code, the queries. */
  main: number;
  /** Worker threads (`WorkerThread`): the QuickJS sandboxes, and completion jobs if any. */
  workers: number;
  /** libuv's pool (the log's fdatasync, file reads) and V8's helpers (GC, compilers). */
  other: number;
}

const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

/** Undefined where /proc is not there to read. */
export function threadCpu(pid: number): ThreadCpu | undefined {
  const used: ThreadCpu = { main: 0, workers: 0, other: 0 };
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const tid of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Fields after the name: state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
    if (tid === String(pid)) used.main += ms;
    else if (name === 'WorkerThread') used.workers += ms;
    else used.other += ms;
  }
  return used;
}

/** A process's CPU so far, every thread of it (ended ones too), ms; 0 once it is gone. */
export function processCpuMs(pid: number, withReapedChildren = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, then cutime, cstime: the children it has reaped.
    const own = Number(fields[11]) + Number(fields[12]);
    const reaped = withReapedChildren ? Number(fields[13]) + Number(fields[14]) : 0;
    return (own + reaped) * CLOCK_TICK_MS;
  } catch {
    return 0;
  }
}

/** Per request, in CPU milliseconds, between two readings. */
export function perRequest(before: ThreadCpu, after: ThreadCpu, requests: number): ThreadCpu {
  const per = (key: keyof ThreadCpu) => (after[key] - before[key]) / Math.max(1, requests);
  return { main: per('main'), workers: per('workers'), other: per('other') };
}

/**
 * Requests per second on `cores` cores from a request's CPU, with the load generator elsewhere:
 * the event loop has one core, everything else shares the others (threads that ended during the
 * measure, e.g. a retired worker, are not counted: an estimate, not a measure).
 */
export function estimateOnCores(cpu: ThreadCpu, cores: number): number {
  const loop = 1000 / cpu.main;
  const rest = cpu.workers + cpu.other;
  return rest === 0 ? loop : Math.min(loop, ((cores - 1) * 1000) / rest);
}
