import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stack } from './harness';

// The lint rule that keeps workflow code deterministic: no Node, database or network imports in workflows/.

const root = path.join(__dirname, '..');

// ESLint's flat config is an ES module, which jest's sandbox cannot load: run the real CLI instead.
async function lint(code: string, file: string): Promise<{ ruleId: string }[]> {
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
