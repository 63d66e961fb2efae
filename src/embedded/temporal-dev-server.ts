import path from 'node:path';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ALL_SEARCH_ATTRIBUTES } from '../temporal/search-attributes';
import { registerMissingSearchAttributes, waitUntilFrontendServes } from '../temporal/namespace-setup';
import { resolveTemporalCli } from './temporal-cli';
import { startServiceProcess } from './service-process';

const READY_TIMEOUT_MS = 60_000;

interface DevServerOptions {
  dataDir: string; port: number; uiPort: number; namespace: string;
  /** Where the Web UI decodes the platform's encrypted payloads (the API's /codec). */
  codecEndpoint?: string;
}

/**
 * The Temporal CLI dev server for the embedded stack: history in a SQLite file under DATA_DIR (kept
 * across restarts), the Web UI, and our search attributes registered. It runs in its own process
 * group (see service-process.ts) so that Ctrl-C stops it only after the worker. Without a local CLI
 * and Go, the SDK downloads the same CLI version (needs the internet) and runs it as its child.
 */
export async function startTemporalDevServer(opts: DevServerOptions) {
  const cli = resolveTemporalCli();
  const address = `127.0.0.1:${opts.port}`;
  const uiUrl = `http://localhost:${opts.uiPort}`;
  if (!cli) return { address, uiUrl, stop: await startDownloadedDevServer(opts) };

  const server = await startServiceProcess({
    command: cli,
    pidFile: path.join(opts.dataDir, 'temporal.pid'),
    ports: [
      { port: opts.port, what: 'The Temporal dev server', setting: 'TEMPORAL_PORT' },
      { port: opts.uiPort, what: 'The Temporal Web UI', setting: 'TEMPORAL_UI_PORT' },
    ],
    args: [
      'server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--ui-port', String(opts.uiPort),
      '--namespace', opts.namespace, '--db-filename', path.join(opts.dataDir, 'temporal.sqlite'), '--log-level', 'error',
      ...(opts.codecEndpoint ? ['--ui-codec-endpoint', opts.codecEndpoint] : []),
      // As the SDK starts it: updates on (KYC documents, micro-deposit answers, cancels), no version check.
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
      '--dynamic-config-value', 'frontend.enableServerVersionCheck=false',
      ...ALL_SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a.name}=${TypedSearchAttributes.toMetadataType(a.type)}`]),
    ],
  });
  try {
    await waitUntilFrontendServes(address, opts.namespace, {
      timeoutMs: READY_TIMEOUT_MS, intervalMs: 200, what: 'the Temporal dev server',
      stoppedReason: () => (server.exited() ? `the Temporal dev server stopped while starting: ${server.stderrTail() || 'exited'}` : undefined),
    });
    const connection = await Connection.connect({ address });
    // The dev server registers `--search-attribute`s only when it creates its database.
    await registerMissingSearchAttributes(connection, opts.namespace).finally(() => connection.close());
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { address, uiUrl, stop: server.stop };
}

async function startDownloadedDevServer(opts: DevServerOptions) {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download', version: 'v1.5.1' },
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
  return () => env.teardown();
}
