import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The repository stands alone: a clone with nothing beside it (no reference folders, no other
// checkout) passes the unit project, and no tracked file points outside the clone. The unit project
// is a whole Jest run of its own beside the other e2e files: on a loaded CI machine it has taken four
// minutes, so it has seven.

const root = path.join(__dirname, '../..');
const outside = ['..', 'shared'].join('/');

test('no tracked file names a folder beside the repository', () => {
  const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n')
    .filter((f) => f && /\.(md|ts|js|mjs|sh|json|ya?ml)$/.test(f) && f !== 'test/e2e/clean-clone.test.ts');
  const naming = files.filter((f) => fs.existsSync(path.join(root, f)) && fs.readFileSync(path.join(root, f), 'utf8').includes(outside));
  expect(naming).toEqual([]);
});

test('a clone with nothing beside it passes the unit project', () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'clean-clone-'));
  const clone = path.join(parent, 'platform');
  try {
    execFileSync('git', ['clone', '--quiet', root, clone]);
    expect(fs.readdirSync(parent)).toEqual(['platform']);
    // The registry is not needed to prove this: the same installed packages, linked.
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
    const run = spawnSync(process.execPath, ['node_modules/jest/bin/jest.js', '--selectProjects', 'unit'], {
      cwd: clone, encoding: 'utf8', env: { ...process.env, CI: 'true' }, timeout: 420_000,
    });
    const summary = /Tests:\s+(.*)/.exec(run.stderr)?.[1] ?? run.stderr.slice(-2000);
    process.stdout.write(`clean clone: unit project ${summary}\n`);
    expect(summary).toMatch(/^\d+ passed, \d+ total$/);
    expect(run.status).toBe(0);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
}, 480_000);
