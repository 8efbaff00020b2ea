// Making the service's folders (DATA_DIR, its outbox). Node's `mkdirSync(…, { recursive: true })`
// never returns on a file system that refuses a new folder with ENOENT though its parent exists
// (DATA_DIR=/proc/pal spun at start). Each missing folder is made on its own here, so such a
// refusal is an error that names the folder, as any other is.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Makes `path` and every missing folder above it, with `mode` for those it makes. */
export function makeFolder(path: string, mode = 0o777): void {
  const missing: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    if (exists(dir)) break;
    missing.push(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, { mode });
    } catch (error) {
      // Made meanwhile by another process (two starting at once): as good as made here. Not a
      // name that exists as something else (a link to a folder not there: an unmounted volume).
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !exists(dir)) throw error;
    }
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
