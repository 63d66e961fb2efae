import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The lint rules: workflow code stays deterministic (no Node, database or network imports in workflows/),
// and imports run one way, down the layers of docs/ARCHITECTURE.md.

const root = path.join(__dirname, '../..');

type Found = { ruleId: string; message: string }[];

// Planted imports, each as the first lines of a file at a path of the project.
const imports = (from: string) => `import { x } from '${from}';\nexport const y = x;\n`;
const WORKFLOW_IMPORTS = [
  "import fs from 'fs';",
  "import { readFile } from 'node:fs/promises';",
  "import pg from 'pg';",
  "import { Kysely } from 'kysely';",
  "import { createPublicClient } from 'viem';",
  "import { Connection } from '@temporalio/client';",
  "import { createDb } from '../src/db';",
  "import { createKycDatabaseActivities } from '../activities/kyc-database';",
];
const TYPE_ONLY = "import type { KycActivities } from '../activities/kyc-database';\nimport { proxyActivities } from '@temporalio/workflow';\n"
  + "export const a = proxyActivities<KycActivities>({ startToCloseTimeout: '1s' });\n";
const UPWARD: [string, string, string][] = [
  ['activities/example.ts', '../src/resources/transfers/routes', 'an activity'],
  ['activities/example.ts', '../src/api/context', 'an activity'],
  ['src/transfers/example.ts', '../api/route', 'a core module'],
  ['src/ledger/example.ts', '../../activities/chains', 'a core module'],
  ['src/db/example.ts', '../ledger/ledger', 'the database layer (src/db)'],
  ['src/resources/transfers/example.ts', '../../main/run', 'the HTTP layer (src/api, src/resources)'],
  ['src/errors.ts', './db/schema', 'a shared module'],
];
const DOWNWARD: [string, string][] = [
  ['activities/example.ts', '../src/transfers/transfer'],
  ['src/transfers/example.ts', '../db/schema'],
  ['src/kyc/example.ts', '../../workflows/kyc-messages'],
  ['src/resources/transfers/example.ts', '../../transfers/service'],
  ['src/cli/example.ts', '../resources/transfers/routes'],
];

// A core module takes a workflow module's types, and values only from its message file.
const WORKFLOW_TYPE_ONLY = "import type { kycWorkflow } from '../../workflows/kyc';\nexport type K = typeof kycWorkflow;\n";

const cases = [
  { code: imports('../../workflows/kyc'), file: 'src/kyc/example.ts' },
  { code: WORKFLOW_TYPE_ONLY, file: 'src/kyc/example.ts' },
  ...WORKFLOW_IMPORTS.map((code) => ({ code: `${code}\nexport const x = 1;\n`, file: 'workflows/example.ts' })),
  { code: TYPE_ONLY, file: 'workflows/example.ts' },
  { code: "import pg from 'pg';\nexport const x = pg;\n", file: 'activities/example.ts' },
  ...UPWARD.map(([file, from]) => ({ code: imports(from), file })),
  ...DOWNWARD.map(([file, from]) => ({ code: imports(from), file })),
];
const found = new Map<string, Found>();
beforeAll(() => {
  const run = spawnSync(process.execPath, [path.join(__dirname, '../harness/lint-texts.mjs')], { cwd: root, input: JSON.stringify(cases), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`eslint failed: ${run.stderr}`);
  (JSON.parse(run.stdout) as Found[]).forEach((messages, i) => found.set(`${cases[i].file}\n${cases[i].code}`, messages));
}, 60_000);
const lint = (code: string, file: string) => found.get(`${file}\n${code}`)!;

test.each(WORKFLOW_IMPORTS)('workflows/ may not %s', (code) => {
  expect(lint(`${code}\nexport const x = 1;\n`, 'workflows/example.ts')).toHaveLength(1);
});

test('type-only imports of activities and the workflow SDK are allowed in workflows/', () => {
  expect(lint(TYPE_ONLY, 'workflows/example.ts')).toHaveLength(0);
});

test('activities may use Node and the database', () => {
  expect(lint("import pg from 'pg';\nexport const x = pg;\n", 'activities/example.ts')).toHaveLength(0);
});

test.each(UPWARD)('layering: %s may not import %s', (file, from, layer) => {
  const messages = lint(imports(from), file);
  expect(messages).toHaveLength(1);
  expect(messages[0].message).toContain(`Layering (docs/ARCHITECTURE.md): ${layer} imports only the layers below it`);
});

test.each(DOWNWARD)('layering: %s may import %s (a layer below, or workflow messages)', (file, from) => {
  expect(lint(imports(from), file)).toHaveLength(0);
});

test('layering: a core module imports values from workflow message files only, and a workflow module for its types', () => {
  const values = lint(imports('../../workflows/kyc'), 'src/kyc/example.ts');
  expect(values).toHaveLength(1);
  expect(values[0].message).toContain('a core module imports values from workflow message files');
  expect(lint(WORKFLOW_TYPE_ONLY, 'src/kyc/example.ts')).toHaveLength(0);
});

test('the import cycle check (npm run check:cycles, part of npm run lint) fails on a planted cycle and passes on the tree', () => {
  const dpdm = (cwd: string, ...globs: string[]) => spawnSync(process.execPath,
    [path.join(root, 'node_modules/dpdm/lib/bin/dpdm.js'), '--no-tree', '--no-warning', '--circular', '--exit-code', 'circular:1', ...globs],
    { cwd, encoding: 'utf8' });
  const planted = mkdtempSync(path.join(os.tmpdir(), 'cycle-'));
  writeFileSync(path.join(planted, 'a.ts'), "import type { B } from './b';\nexport type A = { b?: B };\n");
  writeFileSync(path.join(planted, 'b.ts'), "import type { A } from './a';\nexport type B = { a?: A };\n");
  const found = dpdm(planted, '*.ts');
  expect(found.status).toBe(1);
  expect(found.stdout).toMatch(/1\) (a\.ts -> b\.ts|b\.ts -> a\.ts)/);
  expect(dpdm(root, 'src/**/*.ts', 'workflows/**/*.ts', 'activities/**/*.ts', 'workers/**/*.ts').status).toBe(0);
});
