// The JavaScript that runs in the sandbox's context around the pal's code: it completes the `pal`
// object the host built (host functions over RunState, sandbox.ts) with `pal.call`, which needs
// `import()`, freezes it, imports the module and calls the export. It is compiled once, when a
// sandbox is built, and called for every run with the run's module path and export name.
//
// It captures JSON before any guest code runs, so a workflow that replaces JSON.stringify changes
// only what its own code sees. It resolves to the JSON text of the return value, to undefined
// when there is none, or to null when the module has no such export.
export const DRIVER_SOURCE = `(async (pal, module, input, path, exportName) => {
const { parse, stringify } = JSON, freeze = Object.freeze;
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
try { return value === undefined ? undefined : stringify(value); }
catch (error) { throw new TypeError('the return value cannot be written as JSON: ' + error.message); }
})`;
