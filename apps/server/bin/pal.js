#!/usr/bin/env node
// The `pal` command (`npx pal …` from the repository root). It runs the built CLI
// (dist/main.js, made by `npm run build` or `npm start`); in a fresh clone that has not been
// built yet, it runs the TypeScript sources through tsx instead, in the same process too.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serverNodeFlags } from './node-flags.js';

// Before anything loads better-sqlite3, whose native module crashes on an unsupported Node.
const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const lowest = Number(/>=\s*(\d+)/.exec(engines.node)?.[1]);
if (!(Number(process.versions.node.split('.')[0]) >= lowest)) {
  console.error(
    `pal needs Node.js ${lowest} or newer (the 22 and 24 LTS lines); this is ${process.version}. ` +
      'Without one installed, run it through tools/node/run.sh.',
  );
  process.exit(1);
}

// The server's commands run with the V8 heap flags of their settings (bin/node-flags.js): node is
// started again in this same process (same pid, so signals and exit codes are the server's own),
// now with the flags. Where process.execve is missing (Node before 22.15), the server still runs,
// on V8's defaults, and says so.
const serving = ['serve', 'start'].includes(process.argv[2] ?? '');
const { flags = [], error } = serving
  ? serverNodeFlags(process.env, process.execArgv)
  : { flags: [] };
if (error) {
  console.error(`error: ${error}`);
  process.exit(1);
}
const built = new URL('../dist/main.js', import.meta.url);
if (flags.length > 0 && existsSync(built)) {
  if (typeof process.execve === 'function')
    process.execve(process.execPath, [
      process.execPath,
      ...process.execArgv,
      ...flags,
      fileURLToPath(import.meta.url),
      ...process.argv.slice(2),
    ]);
  console.error(
    `pal: this Node.js cannot restart itself with ${flags.join(' ')}; V8's defaults apply`,
  );
}
if (existsSync(built)) {
  await import(built.href);
} else {
  const source = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const args = [
    ...flags,
    '--import',
    'tsx',
    '--conditions=@pal-workflow/source',
    source,
    ...process.argv.slice(2),
  ];
  // In this same process, as above: a child would be left running by a signal to this one.
  if (typeof process.execve === 'function')
    process.execve(process.execPath, [process.execPath, ...args]);
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
}
