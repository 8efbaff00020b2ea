/**
 * `npm run test:packages`: what a consumer of the published packages gets. Builds them, packs
 * each with `npm pack`, installs the tarballs into a fresh project outside the workspace,
 * type-checks a consumer (strict, NodeNext) and runs it. Fails on the first problem.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../../..');
const PACKAGES = ['types', 'validators', 'server-skeleton', 'client'];

/** A command that failed: its own output, already printed, says why; a stack would not. */
class StepFailed extends Error {}

const run = (command: string, args: string[], cwd: string) => {
  const line = `${command} ${args.join(' ')}`;
  console.log(`$ ${line}`);
  try {
    execFileSync(command, args, { cwd, stdio: 'inherit' });
  } catch (e) {
    const status = (e as { status?: number | null }).status;
    throw new StepFailed(
      `\`${line}\` failed (exit ${status ?? 'by a signal'}): its output is above`,
    );
  }
};

const work = mkdtempSync(join(tmpdir(), 'pal-consumer-'));
try {
  run('npx', ['nx', 'run-many', '-t', 'build', '-p', ...PACKAGES, '--outputStyle=stream'], ROOT);
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  for (const name of PACKAGES)
    run('npm', ['pack', '--silent', '--pack-destination', tarballs], join(ROOT, 'packages', name));
  const files = readdirSync(tarballs);
  const tarball = (name: string) =>
    `file:${join(
      tarballs,
      files.find((f) => f.startsWith(`pal-workflow-${name}-`))!,
    )}`;
  const project = join(work, 'consumer');
  cpSync(join(HERE, 'consumer'), join(project, 'src'), { recursive: true });
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify(
      {
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: {
          ...Object.fromEntries(PACKAGES.map((n) => [`@pal-workflow/${n}`, tarball(n)])),
          fastify: '5.12.8',
        },
        // The published packages depend on each other by version; point those at the tarballs too.
        overrides: Object.fromEntries(PACKAGES.map((n) => [`@pal-workflow/${n}`, tarball(n)])),
        devDependencies: { typescript: '6.0.3', '@types/node': '20.19.43' },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        rootDir: 'src',
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        outDir: 'dist',
        types: ['node'],
        lib: ['ES2023'],
      },
      include: ['src'],
    }),
  );
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], project);
  run('npx', ['tsc', '-p', 'tsconfig.json'], project);
  run('node', ['dist/smoke.js'], project);
} catch (e) {
  if (!(e instanceof StepFailed)) throw e;
  console.error(`pack-smoke: ${e.message}`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
