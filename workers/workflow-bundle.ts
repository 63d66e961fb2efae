// `npm run build:workflows [file]`: the workflow code bundled once, ahead of time, as Temporal advises
// for production. A worker given the file (WORKFLOW_BUNDLE_PATH) starts without running webpack and
// runs exactly the code that was built, whatever else changes on its disk afterwards.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type Logger } from '@temporalio/worker';

const DEFAULT_WORKFLOW_BUNDLE_PATH = 'dist/workflow-bundle.js';

/** The workflow code's entry point, which a worker bundles itself when given no bundle. */
export const WORKFLOWS_PATH = require.resolve('../workflows');
/** Workflow interceptors every workflow runs with (bundled with the code). */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('../workflows/retry-alarm')];

/** Bundles workflows/ (and what it imports) into one file; returns its absolute path. */
export async function buildWorkflowBundle(file: string, logger?: Logger): Promise<string> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, logger });
  const out = path.resolve(file);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, code);
  return out;
}

if (require.main === module) {
  buildWorkflowBundle(process.argv[2] ?? DEFAULT_WORKFLOW_BUNDLE_PATH).then(
    (out) => console.log(`workflow bundle written to ${out}`),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
