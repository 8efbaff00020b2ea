// The V8 heap flags the server's own commands (`pal serve`, `pal start`, and so `npm start`) run
// with, from V8_SEMI_SPACE_MB, V8_OLD_SPACE_MB and V8_HEAP_GROWING_PERCENT (docs/configuration.md,
// "Memory"). They must be given to node when it starts: V8 sizes its heap once, and setting them
// later changes nothing.
// Plain JavaScript, as bin/pal.js reads it before anything is built or compiled.

/** V8's young generation grows its semi-spaces to 16–64 MiB under a burst of requests; 4 MiB holds
 * RSS under 200 MiB at 100 connections of P2 for a small cost in throughput (docs/performance.md). */
export const DEFAULT_SEMI_SPACE_MB = 4;

/** How far V8 lets its old generation grow past what a full GC left live before it collects
 * again. Left to V8, the factor is 1.1 to 4, by its measure of GC and allocation speeds: under a
 * burst of requests it chose about 4 in three runs of 15, and RSS went from about 180 to 287–314
 * MiB and stayed. Fixed at 1.2, it holds RSS under 200 MiB without bounding the heap, as
 * V8_OLD_SPACE_MB would (docs/performance.md). */
export const DEFAULT_HEAP_GROWING_PERCENT = 20;

const SETTINGS = [
  {
    name: 'V8_SEMI_SPACE_MB',
    flag: '--max-semi-space-size',
    min: 0,
    max: 1024,
    default: DEFAULT_SEMI_SPACE_MB,
  },
  // 0 is V8's own limit. A bound is a hard stop: past it the process ends. The server's heap holds
  // about 45 MiB live after a full GC, more under load, so a bound under 128 would end it at its
  // first burst (and 1 ended it while V8 read its own start-up snapshot): refused at start.
  {
    name: 'V8_OLD_SPACE_MB',
    flag: '--max-old-space-size',
    min: 128,
    orZero: true,
    max: 1048576,
    default: 0,
  },
  {
    name: 'V8_HEAP_GROWING_PERCENT',
    flag: '--heap-growing-percent',
    min: 0,
    max: 1000,
    default: DEFAULT_HEAP_GROWING_PERCENT,
  },
];

/**
 * The node flags of the settings in `env` (0: none, Node's own default), or an error message that
 * names the bad setting. A flag that NODE_OPTIONS or node's own arguments already give is left
 * to them.
 */
export function serverNodeFlags(env, given = []) {
  const flags = [];
  for (const setting of SETTINGS) {
    const raw = (env[setting.name] ?? '').trim();
    const value = raw === '' ? setting.default : Number(raw);
    const inRange =
      (value >= setting.min && value <= setting.max) || (setting.orZero && value === 0);
    if (!/^\d*$/.test(raw) || !inRange)
      return {
        error: `bad setting ${setting.name}: expected ${setting.orZero ? '0 or ' : ''}an integer from ${setting.min} to ${setting.max}, got "${raw}"`,
      };
    const already = [...given, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].some(
      (arg) => arg.split('=')[0].replaceAll('_', '-') === setting.flag,
    );
    if (value > 0 && !already) flags.push(`${setting.flag}=${value}`);
  }
  return { flags };
}
