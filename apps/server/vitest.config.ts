// The server's tests run in two projects: everything on SQLite, and the storage, domain and HTTP
// suites again on a real PostgreSQL that test/postgres-setup.ts starts (a throw-away cluster).
// Tests ask test/engine.ts which engine they run on.
import { defineConfig } from 'vitest/config';
import shared from '../../vitest.shared.ts';

export default defineConfig({
  resolve: shared.resolve,
  ssr: shared.ssr,
  test: {
    projects: [
      { resolve: shared.resolve, ssr: shared.ssr, test: { ...shared.test, name: 'sqlite' } },
      {
        resolve: shared.resolve,
        ssr: shared.ssr,
        test: {
          ...shared.test,
          name: 'postgres',
          include: ['src/storage/**/*.test.ts', 'src/domain/**/*.test.ts', 'test/*.int.test.ts'],
          // Chromium drives the pages (they do not depend on the engine); the soak is about
          // SQLite's native module.
          exclude: ['test/*.browser.int.test.ts', 'test/native-soak.int.test.ts'],
          env: { PAL_TEST_ENGINE: 'postgres' },
          globalSetup: ['test/postgres-setup.ts'],
        },
      },
    ],
  },
});
