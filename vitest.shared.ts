// Shared vitest settings: workspace packages resolve to their TypeScript sources
// (the "@pal-workflow/source" export condition), so tests never need a prior build.
import { defineConfig } from 'vitest/config';

export const sourceConditions = ['@pal-workflow/source', 'import', 'node', 'default'];

export default defineConfig({
  resolve: { conditions: sourceConditions },
  ssr: { resolve: { conditions: sourceConditions } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
