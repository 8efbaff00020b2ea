#!/usr/bin/env node
// The `pal` command (`npx pal …` from the repository root). It runs the built CLI
// (dist/main.js, made by `npm run build` or `npm start`); in a fresh clone that has not been
// built yet, it runs the TypeScript sources through tsx instead.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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

const built = new URL('../dist/main.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const source = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--conditions=@pal-workflow/source', source, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  process.exitCode = run.status ?? 1;
}
