// The JavaScript that runs in the sandbox's context around the pal's code. It is evaluated once,
// when a sandbox is built: it puts a seeded `Math.random` in place and gives back the driver,
// called for every run with the run's module path, export name and seed. The driver completes
// the `pal` object the host built (host functions over RunState, sandbox.ts) with `pal.call`,
// which needs `import()`, freezes it, imports the module and calls the export.
//
// Math.random: QuickJS seeds its generator when a context is made, so every run from the built
// state would draw the same numbers. Each run seeds this one (sfc32, 53 bits a number) with 128
// bits from the host's cryptographic generator, so no run can tell another's numbers; the seed
// is read at the run's first draw, so that a run that draws none pays nothing for it.
//
// The driver captures JSON before any guest code runs, so a workflow that replaces
// JSON.stringify changes only what its own code sees. It resolves to the JSON text of the return
// value, to undefined when there is none, or to null when the module has no such export.
export const DRIVER_SOURCE = `(() => {
let a = 0, b = 0, c = 0, d = 0, unseeded;
// Taken now: at a run's first draw its own code may have replaced the built-ins.
const hex = parseInt, cut = Function.prototype.call.bind(String.prototype.slice), Internal = InternalError;
const next = () => {
  const t = (((a + b) | 0) + d) | 0;
  d = (d + 1) | 0; a = b ^ (b >>> 9); b = (c + (c << 3)) | 0; c = (c << 21) | (c >>> 11); c = (c + t) | 0;
  return t >>> 0;
};
const random = { random() {
  if (unseeded !== undefined) {
    a = hex(cut(unseeded, 0, 8), 16) | 0; b = hex(cut(unseeded, 8, 16), 16) | 0;
    c = hex(cut(unseeded, 16, 24), 16) | 0; d = hex(cut(unseeded, 24, 32), 16) | 0;
    unseeded = undefined;
  }
  return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
} }.random;
Object.defineProperty(Math, 'random', { value: random, writable: true, enumerable: false, configurable: true });
return async (pal, module, input, path, exportName, seed) => {
const { parse, stringify } = JSON, freeze = Object.freeze;
unseeded = seed;
pal.call = async (name, exportName, input) => {
  const path = module(name), ns = path === undefined ? undefined : await import(path);
  const fn = ns === undefined ? undefined : ns[exportName];
  if (typeof fn !== 'function') throw new TypeError('pal.call: module "' + name + '" has no export "' + exportName + '"');
  return fn(input, pal);
};
for (const part of [pal.vars, pal.roles, pal.mail, pal.transaction, pal.documents]) if (part) freeze(part);
freeze(pal);
const fn = (await import(path))[exportName];
if (typeof fn !== 'function') return null;
const value = await fn(parse(input), pal);
if (value === undefined) return undefined;
let json;
// Running out of memory on the way stays what it is (WORKFLOW_MEMORY); any other error is the
// value's.
try { json = stringify(value); }
catch (error) { if (error instanceof Internal) throw error; throw new TypeError('the return value cannot be written as JSON: ' + error.message); }
// A function or a symbol (or a toJSON that gives nothing) is no JSON value: not "nothing".
if (json === undefined) throw new TypeError('the return value cannot be written as JSON: it is a ' + typeof value);
return json;
};
})()`;
