import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTES } from '../temporal/search-attributes';
import { resolveTemporalCli } from './temporal-cli';

/**
 * The Temporal CLI dev server for the embedded stack: history in a SQLite file under DATA_DIR (kept
 * across restarts), the Web UI, and our search attributes registered. Without a local CLI and Go,
 * the SDK downloads the same CLI version (needs the internet).
 */
export async function startTemporalDevServer(opts: { dataDir: string; port: number; uiPort: number; namespace: string }) {
  const cli = resolveTemporalCli();
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: cli ? { type: 'existing-path', path: cli } : { type: 'cached-download', version: 'v1.5.1' },
      ip: '127.0.0.1',
      port: opts.port,
      ui: true,
      uiPort: opts.uiPort,
      namespace: opts.namespace,
      dbFilename: path.join(opts.dataDir, 'temporal.sqlite'),
      searchAttributes: ALL_SEARCH_ATTRIBUTES,
      extraArgs: ['--log-level', 'error'],
    },
  });
  return { address: `127.0.0.1:${opts.port}`, uiUrl: `http://localhost:${opts.uiPort}`, stop: () => env.teardown() };
}
