// The shared settings, less the `import` condition for Node: vitest passes ssr.resolve.conditions
// to the workers as `node --conditions …`, and with `import` there, a CommonJS `require()` inside
// node_modules (mailparser requiring nodemailer/lib/addressparser) loads the ESM build and gets a
// namespace object instead of the function. Vite adds import/require/default by itself anyway.
import shared from '../../vitest.shared.ts';

const conditions = (shared.ssr?.resolve?.conditions ?? []).filter((c) => c !== 'import');

export default {
  ...shared,
  ssr: { ...shared.ssr, resolve: { ...shared.ssr?.resolve, conditions } },
};
