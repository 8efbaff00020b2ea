// How tests run the `pal` bin as a real process: one node process with tsx as its loader, so
// that a signal sent to the child reaches the server itself. (The tsx CLI would run the server in
// a grandchild: `kill -9` of the CLI leaves the server running, orphaned.)
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** `node` arguments before the command's own: `[...palNodeArgs, 'serve']`, cwd apps/server. */
export const palNodeArgs = [
  '--import',
  tsxLoader,
  '--conditions=@pal-workflow/source',
  'src/main.ts',
];
