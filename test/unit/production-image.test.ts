import { readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

// Static check of the Dockerfile: the production image copies a chosen set of folders, and a file
// the API, the worker or the CLI imports from outside them crashes both containers at start.

const repoRoot = path.join(__dirname, '../..');
const entryPoints = ['src/main/api.ts', 'workers/main.ts', 'src/cli/index.ts', 'workflows/index.ts'];

/** Every project file (not npm packages) that the entry points load, relative to the repository. */
async function filesLoaded(): Promise<string[]> {
  const result = await build({
    entryPoints: entryPoints.map((e) => path.join(repoRoot, e)),
    absWorkingDir: repoRoot, bundle: true, platform: 'node', packages: 'external', write: false, metafile: true,
    outdir: 'out', logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs);
}

/** The sources of the Dockerfile's COPY instructions. */
function copiedPaths(): string[] {
  const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
  return [...dockerfile.matchAll(/^COPY\s+(.+)$/gm)].flatMap((m) => m[1].trim().split(/\s+/).slice(0, -1))
    .map((p) => p.replace(/^\.\//, '').replace(/\/$/, ''));
}

test('the production image holds every file the API, the worker and the CLI load', async () => {
  const copied = copiedPaths();
  expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src', 'workflows']));
  const loaded = await filesLoaded();
  expect(loaded).toEqual(expect.arrayContaining(entryPoints));
  const missing = loaded.filter((file) => !copied.some((p) => file === p || file.startsWith(`${p}/`)));
  expect(missing).toEqual([]);
});
