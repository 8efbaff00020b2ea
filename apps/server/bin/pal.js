#!/usr/bin/env node
// The `pal` command (`npx pal …` from the repository root). It runs the built CLI
// (dist/main.js, made by `npm run build` or `npm start`); in a fresh clone that has not been
// built yet, it runs the TypeScript sources through tsx instead, in the same process too.
import { spawn } from 'node:child_process';
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
// now with the flags. Where process.execve is missing (Node before 22.15) or cannot be used
// (Windows), the server still runs, on V8's defaults, and says so.
const serving = ['serve', 'start'].includes(process.argv[2] ?? '');
const { flags = [], error } = serving
  ? serverNodeFlags(process.env, process.execArgv)
  : { flags: [] };
if (error) {
  console.error(`error: ${error}`);
  process.exit(1);
}
const canExecve = typeof process.execve === 'function' && process.platform !== 'win32';
const built = new URL('../dist/main.js', import.meta.url);
if (flags.length > 0 && existsSync(built)) {
  if (canExecve)
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
    ...process.execArgv,
    ...flags,
    '--import',
    'tsx',
    '--conditions=@pal-workflow/source',
    source,
    ...process.argv.slice(2),
  ];
  // In this same process, as above; else a child, which is told of the signals sent to this one.
  // (Ctrl-C reaches both already, as the terminal signals the whole group: SIGINT is not passed
  // on, or the server would get it twice and end in the middle of its shutdown.)
  if (canExecve) process.execve(process.execPath, [process.execPath, ...args]);
  const child = spawn(process.execPath, args, { stdio: 'inherit' });
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Ended by a signal: so does this one, as a shell expects.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}
