import { spawnSync } from 'node:child_process';
import path from 'node:path';

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
