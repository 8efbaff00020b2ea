/**
 * `npm run bench:generate`: a full `npm run generate` from clean (every generated
 * folder deleted), then the nx `generate` target twice: the second run, with no
 * change, must be served from the nx cache.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { printTable, type Row } from './report.js';

const GENERATED = ['types', 'validators', 'server-skeleton', 'client'].map(
  (p) => `packages/${p}/src/generated`,
);

function timed(command: string, args: string[], root: string): number {
  const started = performance.now();
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'pipe',
    env: { ...process.env, NX_DAEMON: 'false', NX_TUI: 'false' },
  });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed:\n${result.stderr}`);
  return (performance.now() - started) / 1000;
}

export function benchGenerate(root: string): Row[] {
  for (const dir of GENERATED) rmSync(join(root, dir), { recursive: true, force: true });
  let full: number;
  try {
    full = timed('npm', ['run', '--silent', 'generate'], root);
  } catch (e) {
    execFileSync('git', ['checkout', '--', ...GENERATED], { cwd: root });
    throw e;
  }
  timed('npx', ['nx', 'reset'], root);
  const cold = timed('npx', ['nx', 'run', 'codegen:generate', '--outputStyle=stream'], root);
  const cached = timed('npx', ['nx', 'run', 'codegen:generate', '--outputStyle=stream'], root);
  return [
    {
      name: 'npm run generate, from clean',
      value: full,
      unit: 's',
      target: '≤ 10 s',
      met: full <= 10,
    },
    {
      name: 'nx run codegen:generate, cold cache',
      value: cold,
      unit: 's',
      target: '(reference)',
      met: true,
    },
    {
      name: 'nx run codegen:generate, no change (cache hit)',
      value: cached,
      unit: 's',
      baseline: cold,
      target: '≤ 2 s',
      met: cached <= 2,
    },
  ];
}

export function runGenerateBench(root: string): void {
  printTable('Code generation', benchGenerate(root));
}
