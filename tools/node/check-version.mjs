// Stops with one clear line when this Node.js is not a line the project supports (root
// package.json `engines`), before anything loads a native module that would crash on it.
import { readFileSync } from 'node:fs';

const { engines } = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
);
const lowest = Number(/>=\s*(\d+)/.exec(engines.node)?.[1]);
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= lowest)) {
  console.error(
    `Pal Workflow Services needs Node.js ${lowest} or newer (the 22 and 24 LTS lines); this is ${process.version}. ` +
      'Without one installed, run commands through tools/node/run.sh (e.g. tools/node/run.sh npm ci).',
  );
  process.exit(1);
}
