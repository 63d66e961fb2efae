import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stack } from './harness';

// The lint rules: workflow code stays deterministic (no Node, database or network imports in workflows/),
// and imports run one way, down the layers of docs/ARCHITECTURE.md.

const root = path.join(__dirname, '..');

// ESLint's flat config is an ES module, which jest's sandbox cannot load: run the real CLI instead.
async function lint(code: string, file: string): Promise<{ ruleId: string; message: string }[]> {
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', file, '--format', 'json'], {
    cwd: root,
    input: code,
    encoding: 'utf8',
  });
  const [report] = JSON.parse(result.stdout);
  return report.messages.filter((m: { ruleId: string }) => m.ruleId === '@typescript-eslint/no-restricted-imports');
}

test.each([
  "import fs from 'fs';",
  "import { readFile } from 'node:fs/promises';",
  "import pg from 'pg';",
  "import { Kysely } from 'kysely';",
  "import { createPublicClient } from 'viem';",
  "import { Connection } from '@temporalio/client';",
  "import { createDb } from '../src/db';",
  "import { createKycDatabaseActivities } from '../activities/kyc-database';",
])('workflows/ may not %s', async (code) => {
  expect(await lint(`${code}\nexport const x = 1;\n`, 'workflows/example.ts')).toHaveLength(1);
});

test('type-only imports of activities and the workflow SDK are allowed in workflows/', async () => {
  const code = "import type { KycActivities } from '../activities/kyc-database';\nimport { proxyActivities } from '@temporalio/workflow';\nexport const a = proxyActivities<KycActivities>({ startToCloseTimeout: '1s' });\n";
  expect(await lint(code, 'workflows/example.ts')).toHaveLength(0);
});

test('activities may use Node and the database', async () => {
  expect(await lint("import pg from 'pg';\nexport const x = pg;\n", 'activities/example.ts')).toHaveLength(0);
});

test.each([
  ['activities/example.ts', '../src/resources/transfers/routes', 'an activity'],
  ['activities/example.ts', '../src/api/context', 'an activity'],
  ['src/transfers/example.ts', '../api/route', 'a core module'],
  ['src/ledger/example.ts', '../../activities/chains', 'a core module'],
  ['src/db/example.ts', '../ledger/ledger', 'the database layer (src/db)'],
  ['src/resources/transfers/example.ts', '../../main/run', 'the HTTP layer (src/api, src/resources)'],
  ['src/errors.ts', './db/schema', 'a shared module'],
])('layering: %s may not import %s', async (file, from, layer) => {
  const found = await lint(`import { x } from '${from}';\nexport const y = x;\n`, file);
  expect(found).toHaveLength(1);
  expect(found[0].message).toContain(`Layering (docs/ARCHITECTURE.md): ${layer} imports only the layers below it`);
});

test.each([
  ['activities/example.ts', '../src/transfers/transfer'],
  ['src/transfers/example.ts', '../db/schema'],
  ['src/kyc/example.ts', '../../workflows/kyc'],
  ['src/resources/transfers/example.ts', '../../transfers/service'],
  ['src/cli/example.ts', '../resources/transfers/routes'],
])('layering: %s may import %s (a layer below, or workflow messages)', async (file, from) => {
  expect(await lint(`import { x } from '${from}';\nexport const y = x;\n`, file)).toHaveLength(0);
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

// Every workflow run evaluates the bundle's modules afresh, so a library pulled in by an innocent
// import (a validation helper importing zod and phone metadata) costs CPU on every transfer.
test('the workflow bundle holds the SDK and our workflow code only', () => {
  // The bundle the test stack's workers run, built by `npm run build:workflows`'s code.
  const code = readFileSync(stack().processEnv.WORKFLOW_BUNDLE_PATH!, 'utf8');
  const modules = [...code.matchAll(/\/\*\*\*\/ "(\.\/[^"]+)"/g)].map((m) => m[1]!);
  expect(modules.length).toBeGreaterThan(10);
  const allowed = [/^\.\/node_modules\/(@temporalio|nexus-rpc|ms|long|@protobufjs|protobufjs)\//, /^\.\/workflows\//, /^\.\/src\/(temporal\/(search-attributes|task-queues|failures)|domain\/(kyc|regions))\.ts$/];
  expect(modules.filter((m) => !allowed.some((re) => re.test(m)))).toEqual([]);
});
