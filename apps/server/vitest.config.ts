// The server's tests run in two projects: everything on SQLite, and the storage, domain and HTTP
// suites again on a real PostgreSQL that test/postgres-setup.ts starts (a throw-away cluster).
// Tests ask test/engine.ts which engine they run on.
import { configDefaults, defineConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

// Suites that kill servers under load or soak one: about two minutes of the run on 2 cores.
// `npm test` leaves them to `npm run test:slow` (PAL_TESTS=slow runs only them); CI runs both.
const SLOW = [
  'test/crash.int.test.ts',
  'test/outbox-crash.int.test.ts',
  'test/server-processes.int.test.ts',
  'test/native-soak.int.test.ts',
];
const slowOnly = process.env.PAL_TESTS === 'slow';

/** The project's files: its own includes less the slow suites, or only the slow suites. */
function files(include: string[], exclude: string[]): { include: string[]; exclude: string[] } {
  return slowOnly ? { include: SLOW, exclude } : { include, exclude: [...exclude, ...SLOW] };
}

export default defineConfig({
  resolve: shared.resolve,
  ssr: shared.ssr,
  test: {
    projects: [
      {
        resolve: shared.resolve,
        ssr: shared.ssr,
        test: {
          ...shared.test,
          name: 'sqlite',
          ...files(shared.test!.include!, configDefaults.exclude),
        },
      },
      {
        resolve: shared.resolve,
        ssr: shared.ssr,
        test: {
          ...shared.test,
          name: 'postgres',
          ...files(
            ['src/storage/**/*.test.ts', 'src/domain/**/*.test.ts', 'test/*.int.test.ts'],
            // Chromium drives the pages (they do not depend on the engine); the soak is about
            // SQLite's native module.
            [
              ...configDefaults.exclude,
              'test/*.browser.int.test.ts',
              'test/native-soak.int.test.ts',
            ],
          ),
          env: { PAL_TEST_ENGINE: 'postgres' },
          globalSetup: ['test/postgres-setup.ts'],
        },
      },
    ],
  },
});
