import { describe, expect, it } from 'vitest';
import { exportNames } from './module-exports.js';

describe('exportNames', () => {
  it('lists every form of a named export', () => {
    const names = exportNames(`
      import { helper } from './helper.js';
      export function enter(input) { return helper(input); }
      export async function submit() {}
      export const approve = () => {}, reject = () => {};
      function local() {}
      export { local as returnClaim };
      export { shared } from './shared.js';
      export default function () {}
      // export function commented() {}
      const text = "export function inString() {}";
    `);
    expect([...names!].sort()).toEqual(
      ['approve', 'default', 'enter', 'reject', 'returnClaim', 'shared', 'submit'].sort(),
    );
  });

  it('knows nothing of a module that re-exports all of another, or does not parse', () => {
    expect(exportNames(`export * from './other.js';\nexport function a() {}`)).toBeUndefined();
    expect(exportNames(`export /* all */ * from './other.js';`)).toBeUndefined();
    expect(exportNames(`export // all\n* from './other.js';`)).toBeUndefined();
    expect(exportNames('export function (')).toBeUndefined();
  });

  it('knows a module without exports has none', () => {
    expect(exportNames('const a = 1;')).toEqual(new Set());
  });
});
