// Three projects, one folder each: `test/unit` (pure logic, the lint rules: no service, `npm run
// test:unit`), `test/e2e` (everything through the real stack the global setup starts once) and
// `test/e2e-alone` (the same, for files whose operations reach every tenant or read the shared
// chains at one block: key rewraps, the stray-deposit scan, the bank account's reconciliation).
// `npm test` (scripts/test.sh) runs unit and e2e three files at a time against one stack (each file
// works in tenants of its own, and most of its time waits on sandbox clocks and chains: with two,
// the machine's two cores were half idle; with four, busy enough that a timed wait ran out), and
// beside them e2e-alone one file at a time against a stack of its own (its own database, Temporal,
// chains and bank: alone on it), which the global setup starts for that project.

const common = {
  // Jest's node environment, with pooled connections dropped before the API would close them.
  testEnvironment: '<rootDir>/test/harness/test-environment.js',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
    // The DKLs23 library's entry is an ES module (Node requires it natively; Jest's loader needs it compiled).
    'dkls23-wasm/dkls23_wasm\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@0xcarbon/dkls23-wasm/)'],
};

/** @type {import('jest').Config} */
module.exports = {
  watchman: false,
  // A project's own testTimeout is not applied: it is set for the whole run.
  testTimeout: 90_000,
  reporters: ['default', '<rootDir>/test/harness/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    ...['e2e', 'e2e-alone'].map((name) => ({
      ...common,
      displayName: name,
      testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
    })),
  ],
};
