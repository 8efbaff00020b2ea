import { statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/helpers.js';
import { makeFolder } from './folders.js';

describe('makeFolder', () => {
  it('makes every missing folder, with the mode asked for, and leaves an existing one be', () => {
    const dir = tempDir();
    try {
      const deep = join(dir.path, 'a', 'b', 'c');
      makeFolder(deep, 0o700);
      expect(statSync(deep).isDirectory()).toBe(true);
      expect(statSync(join(dir.path, 'a')).mode & 0o777).toBe(0o700);
      makeFolder(deep, 0o700);
      makeFolder(dir.path);
    } finally {
      dir.remove();
    }
  });

  it('fails with the refusal of a file system where a recursive mkdir never returns', () => {
    // /proc refuses a new folder with ENOENT, though /proc exists.
    expect(() => makeFolder('/proc/pal-test/data')).toThrow(/ENOENT.*mkdir '\/proc\/pal-test'/);
  });

  it('fails when a file stands where a folder must be', () => {
    const dir = tempDir();
    try {
      expect(() => makeFolder(join(dir.path, 'nope', 'x'))).not.toThrow();
      expect(() => makeFolder('/etc/hostname/x')).toThrow(/ENOTDIR|EEXIST/);
      // A link to a folder that is not there (an unmounted volume) is no folder.
      const link = join(dir.path, 'volume');
      symlinkSync(join(dir.path, 'not-mounted'), link);
      expect(() => makeFolder(join(link, 'data'))).toThrow(/EEXIST|ENOENT/);
      expect(() => makeFolder(link)).toThrow(/EEXIST/);
    } finally {
      dir.remove();
    }
  });
});
