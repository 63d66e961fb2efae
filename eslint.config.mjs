// Workflow code runs in Temporal's deterministic sandbox: it must not reach Node, the database or the
// network. Those belong in activities. Type-only imports (activity signatures) stay allowed.
import tseslint from 'typescript-eslint';

const forbiddenInWorkflows = [
  'fs', 'fs/*', 'net', 'http', 'https', 'http2', 'dns', 'tls', 'dgram', 'child_process', 'cluster',
  'worker_threads', 'crypto', 'os', 'path', 'process', 'node:*', 'pg', 'pg-*', 'kysely', 'ioredis',
  'viem', 'viem/*', 'express', 'pino', '@temporalio/client', '@temporalio/worker', '@temporalio/activity',
  '@electric-sql/*', '../src/db', '../src/db/*', '../activities', '../activities/*',
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'dist/**', 'coverage/**', 'test-logs/**', 'scratch/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ group: forbiddenInWorkflows, allowTypeImports: true,
          message: 'Workflow code must stay deterministic: do I/O in an activity.' }],
      }],
    },
  },
);
