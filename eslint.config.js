// One lint config for the workspace. Generated code is checked by the compiler, not linted.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/src/generated/**',
      '**/__snapshots__/**',
      '**/node_modules/**',
      '**/.nx/**',
      '**/data/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Kysely's own idioms: migrations and dialect helpers see the schema as it was (`Kysely<any>`),
    // and a query builder before its selection is typed with `{}`.
    files: ['apps/server/src/storage/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
    },
  },
);
