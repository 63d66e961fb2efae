// `npm run stack:cluster`: the production layout on this machine (docs/DEPLOYMENT.md). A Temporal
// cluster built from go.temporal.io/server on PostgreSQL, its services as separate processes, the
// Web UI, local anvil chains, and two API and two worker processes of the platform's production
// entry points, restarted if they die. Against the machine's PostgreSQL and Redis.
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureDefaultSandboxKey } from '../admin/accounts';
import { clusterOptions, type ClusterOptions } from '../cluster/options';
import { platformEnv } from '../cluster/platform-env';
import { superviseNodeProcess, type SupervisedProcess } from '../cluster/supervisor';
import { installTemporalServer, startTemporalCluster } from '../cluster/temporal-cluster';
import { API_PORTS, WORKER_COUNT, WORKER_METRICS_PORTS } from '../cluster/layout';
import { loadConfig } from '../config';
import { createDb, migrateToLatest } from '../db';
import { startAnvilNodes } from '../embedded/anvil';
import { startSolanaNode } from '../embedded/solana';
import { startBitcoinNode } from '../embedded/bitcoin';
import { lockDataDir } from '../embedded/service-process';
import { createLogger } from '../logger';
import { buildWorkflowBundle } from '../../workers/workflow-bundle';
import { reportWhileWaiting, runMain } from './run';

const root = path.join(__dirname, '../..');
/** webpack's report of the bundle is noise in the banner's terminal; a failed build still throws. */
const quietBundler = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

runMain('cluster', async () => {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'cluster');
  const opts = clusterOptions(process.env, config.dataDir);
  fs.mkdirSync(opts.dir, { recursive: true });
  const unlock = lockDataDir(opts.dir);
  const stops: [string, () => Promise<void>][] = [['data directory lock', async () => unlock()]];
  const stopAll = async () => {
    for (const [part, stop] of stops.reverse()) {
      await reportWhileWaiting(stop(), () => log.warn({ part }, 'still stopping')).catch((err) => log.error({ part, err: String(err) }, 'stop failed'));
    }
  };
  try {
    const bins = installTemporalServer();
    await createDatabaseIfMissing(opts.adminUrl, opts.platformDatabase);
    const db = createDb(opts.platformDatabaseUrl, 2);
    await migrateToLatest(db);
    const sandboxKey = await ensureDefaultSandboxKey(db, opts.dir);
    await db.destroy();

    const anvil = await startAnvilNodes({ basePort: config.ANVIL_BASE_PORT + opts.portOffset, mnemonic: config.CHAIN_TREASURY_MNEMONIC, stateDir: path.join(opts.dir, 'chains') });
    stops.push(['anvil nodes', anvil.stop]);
    const solana = await startSolanaNode({ port: config.SOLANA_NODE_PORT + opts.portOffset, mnemonic: config.CHAIN_TREASURY_MNEMONIC, stateDir: path.join(opts.dir, 'chains'), slotMs: config.SOLANA_SLOT_MS });
    stops.push(['Solana node', solana.stop]);
    const bitcoin = await startBitcoinNode({ port: config.BITCOIN_NODE_PORT + opts.portOffset, mnemonic: config.CHAIN_TREASURY_MNEMONIC, stateDir: path.join(opts.dir, 'chains'), blockMs: config.BITCOIN_BLOCK_MS });
    stops.push(['Bitcoin node', bitcoin.stop]);
    const apiUrls = API_PORTS.map((p) => `http://localhost:${p + opts.portOffset}`);
    log.info('starting the Temporal cluster (history, matching, frontend, worker, UI)');
    const temporal = await startTemporalCluster(
      { db: opts.temporalDb, namespace: config.TEMPORAL_NAMESPACE, portOffset: opts.portOffset, dir: opts.dir, codecEndpoint: `${apiUrls[0]}/codec` },
      bins,
    );
    for (const { name, process } of temporal.processes) stops.push([name, process.stop]);

    const env = platformEnv(opts, { temporalAddress: temporal.address, evmRpcUrls: anvil.env, solanaRpcUrl: solana.url, bitcoinRpcUrl: bitcoin.url, publicBaseUrl: apiUrls[0] });
    env.WORKFLOW_BUNDLE_PATH = await buildWorkflowBundle(path.join(opts.dir, 'workflow-bundle.js'), quietBundler);
    const onRestart = (name: string) => log.warn({ process: name }, 'exited; started again');
    const platform: SupervisedProcess[] = [];
    stops.push(['API and worker processes', () => Promise.all(platform.map((p) => p.stop())).then(() => undefined)]);
    for (let i = 0; i < WORKER_COUNT; i++) {
      const workerEnv = { ...env, TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${WORKER_METRICS_PORTS[i] + opts.portOffset}` };
      platform.push(await supervise(opts, `worker-${i + 1}`, 'workers/main.ts', workerEnv, onRestart));
    }
    for (const [i, port] of API_PORTS.entries()) {
      platform.push(await supervise(opts, `api-${i + 1}`, 'src/main/api.ts', { ...env, PORT: String(port + opts.portOffset) }, onRestart));
    }
    await Promise.all(apiUrls.map((url) => waitUntilReady(`${url}/readyz`)));
    fs.writeFileSync(path.join(opts.dir, 'cluster.json'), JSON.stringify({
      apiUrls, temporalAddress: temporal.address, uiUrl: temporal.uiUrl, databaseUrl: opts.platformDatabaseUrl, evmRpcUrls: anvil.urls,
    }, null, 2));
    process.stdout.write(banner({ apiUrls, temporal, sandboxKey, opts }));
    return { stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
});

function supervise(opts: ClusterOptions, name: string, entry: string, env: NodeJS.ProcessEnv, onRestart: (name: string) => void) {
  return superviseNodeProcess({
    name, entry: path.join(root, entry), env, onRestart,
    logFile: path.join(opts.dir, `${name}.log`), pidFile: path.join(opts.dir, `${name}.pid`),
  });
}

async function createDatabaseIfMissing(adminUrl: string, name: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
}

async function waitUntilReady(url: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} was not ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function banner(parts: { apiUrls: string[]; temporal: { address: string; uiUrl: string }; sandboxKey: string; opts: ClusterOptions }) {
  return [
    '',
    'The production layout is running (docs/DEPLOYMENT.md).',
    `  API processes:     ${parts.apiUrls.map((u) => `${u}/v0`).join(', ')}`,
    `  Worker processes:  ${WORKER_COUNT} (logs in ${parts.opts.dir})`,
    `  Temporal:          ${parts.temporal.address} (frontend, history, matching and worker services on PostgreSQL)`,
    `  Temporal UI:       ${parts.temporal.uiUrl}`,
    `  Databases:         ${parts.opts.platformDatabase}, ${parts.opts.temporalDb.name}, ${parts.opts.temporalDb.visibilityName}`,
    `  Sandbox key:       ${parts.sandboxKey}`,
    '',
    'Ctrl-C stops everything; the data is kept for the next start.',
    '',
  ].join('\n');
}
