// Two import rules keep the house in order (docs/ARCHITECTURE.md):
// - workflow code runs in Temporal's deterministic sandbox: it must not reach Node, the database or the
//   network; those belong in activities. Type-only imports (activity signatures) stay allowed.
// - imports run one way, down the layers: entry points → HTTP and activities → core → db → shared.
import tseslint from 'typescript-eslint';

const forbiddenInWorkflows = [
  'fs', 'fs/*', 'net', 'http', 'https', 'http2', 'dns', 'tls', 'dgram', 'child_process', 'cluster',
  'worker_threads', 'crypto', 'os', 'path', 'process', 'node:*', 'pg', 'pg-*', 'kysely', 'ioredis',
  'viem', 'viem/*', 'express', 'pino', '@temporalio/client', '@temporalio/worker', '@temporalio/activity',
  '@electric-sql/*', '../src/db', '../src/db/*', '../activities', '../activities/*',
];

// The layers as import specifiers see them, whatever the depth of the importing file.
const ENTRY = ['**/main/*', '**/cli/*', '**/admin/*', '**/workers/*', '**/bench/*', '**/scripts/*'];
const HTTP = ['**/api/*', '**/resources/**'];
const ACTIVITIES = ['**/activities', '**/activities/*'];
const WORKFLOWS = ['**/workflows', '**/workflows/*'];
const CORE = [
  '**/customers/*', '**/external-accounts/*', '**/kyc/*', '**/transfers/*', '**/payments/*', '**/webhooks/*', '**/wallets/*', '**/accounts/*', '**/mpc/*', '**/keys/*', '**/ledger/*', '**/reconciliation/*', '**/sandbox-bank/*', '**/chains', '**/chains/*',
  '**/providers', '**/providers/*', '**/sanctions/*', '**/domain/*', '**/temporal/*', '**/embedded/*', '**/config', '**/deps',
];

/** One layer's rule: the layers above it, named in the message so a reader knows which rule and why. */
const importsDownOnly = (layer, above, { allowTypeImports = false, extra = [] } = {}) => ({
  '@typescript-eslint/no-restricted-imports': ['error', {
    patterns: [{
      group: above,
      allowTypeImports,
      message: `Layering (docs/ARCHITECTURE.md): ${layer} imports only the layers below it.`,
    }, ...extra],
  }],
});

// Core modules start and message workflows: values from the workflows' message files, and from a
// workflow module its types only (its code is the worker's).
const WORKFLOW_MESSAGES_ONLY = {
  regex: '(^|/)workflows(/(?![^/]*-messages$)[^/]+)?$',
  allowTypeImports: true,
  message: 'Layering (docs/ARCHITECTURE.md): a core module imports values from workflow message files (workflows/*-messages.ts), and from a workflow module only its types.',
};

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'dist/**', 'coverage/**', 'test-logs/**', 'scratch/**', 'sdk/node_modules/**', 'sdk/dist/**', 'sdk/src/schema.d.ts'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // HTTP: routes, schemas and the two routers outside /v0. Workflow types (not code) for typed starts.
    files: ['src/api/**/*.ts', 'src/resources/**/*.ts'],
    rules: importsDownOnly('the HTTP layer (src/api, src/resources)', [...ENTRY, ...ACTIVITIES]),
  },
  {
    // Activities: thin adapters over the core modules, called by the worker.
    files: ['activities/**/*.ts'],
    rules: importsDownOnly('an activity', [...ENTRY, ...HTTP, ...WORKFLOWS]),
  },
  {
    // Core modules: use-cases, money, rails and chains, sanctions; they start workflows by their messages.
    files: [
      'src/customers/**/*.ts', 'src/external-accounts/**/*.ts', 'src/kyc/**/*.ts', 'src/transfers/**/*.ts', 'src/payments/**/*.ts', 'src/webhooks/**/*.ts', 'src/wallets/**/*.ts', 'src/accounts/**/*.ts', 'src/mpc/**/*.ts', 'src/signer/**/*.ts', 'src/keys/**/*.ts', 'src/ledger/**/*.ts',
      'src/reconciliation/**/*.ts', 'src/sandbox-bank/**/*.ts', 'src/chains/**/*.ts', 'src/providers/**/*.ts', 'src/sanctions/**/*.ts', 'src/domain/**/*.ts', 'src/temporal/**/*.ts',
      'src/embedded/**/*.ts', 'src/config.ts', 'src/deps.ts',
    ],
    rules: importsDownOnly('a core module', [...ENTRY, ...HTTP, ...ACTIVITIES], { extra: [WORKFLOW_MESSAGES_ONLY] }),
  },
  {
    files: ['src/db/**/*.ts'],
    rules: importsDownOnly('the database layer (src/db)', [...ENTRY, ...HTTP, ...ACTIVITIES, ...WORKFLOWS, ...CORE]),
  },
  {
    // Shared by every layer: the one error type, ids, logging, encryption.
    files: ['src/errors.ts', 'src/ids.ts', 'src/logger.ts', 'src/crypto.ts'],
    rules: importsDownOnly('a shared module', [...ENTRY, ...HTTP, ...ACTIVITIES, ...WORKFLOWS, ...CORE, '**/db', '**/db/*']),
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
