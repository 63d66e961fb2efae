// Two projects, one folder each: `test/unit` (pure logic, the lint rules, workflows against mocked
// activities: no service, `npm run test:unit`) and `test/e2e` (everything through the real stack the
// global setup starts once). `npm test` runs two files at a time against that one stack: each file
// works in tenants of its own, and most of a file's time is spent waiting on sandbox clocks and chains.

const common = {
  testEnvironment: 'node',
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
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
    },
  ],
};
