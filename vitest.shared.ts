// Shared vitest settings: workspace packages resolve to their TypeScript sources
// (the "@pal-workflow/source" export condition), so tests never need a prior build.
import { defineConfig } from 'vitest/config';

// No `import` here: vitest passes these to its workers as `node --conditions …`, and with
// `import` a CommonJS require() inside node_modules (mailparser requiring nodemailer) would load
// an ESM build. Vite adds import/require/default by itself.
export const sourceConditions = ['@pal-workflow/source', 'node'];

export default defineConfig({
  resolve: { conditions: sourceConditions },
  ssr: { resolve: { conditions: sourceConditions } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
