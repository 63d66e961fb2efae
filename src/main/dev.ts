// `npm start`: the whole stack on one machine with embedded defaults: PGlite (unless DATABASE_URL),
// the Temporal CLI dev server with its Web UI (unless TEMPORAL_ADDRESS), the worker and the API.
import fs from 'node:fs';
import path from 'node:path';
import { ensureDefaultSandboxKey } from '../admin/accounts';
import { startApiServer } from '../api/server';
import { loadConfig } from '../config';
import { createDataCipher } from '../crypto';
import { createDb, migrateToLatest } from '../db';
import { startEmbeddedPostgres } from '../embedded/pglite';
import { startAnvilNodes } from '../embedded/anvil';
import { startSolanaNode } from '../embedded/solana';
import { startBitcoinNode } from '../embedded/bitcoin';
import { startTemporalDevServer } from '../embedded/temporal-dev-server';
import { startSandboxBank } from '../embedded/sandbox-bank';
import { ensurePortFree, lockDataDir } from '../embedded/service-process';
import { createLogger } from '../logger';
import { configuredScreener } from '../sanctions/screener';
import { connectTemporalClient, ensureSchedules } from '../temporal/client';
import { ensureWalletWatchers } from '../wallets/workflow-client';
import { activityDepsFromConfig, createWorker, requireWorkflowBundle, workerSettings } from '../../workers/create-worker';
import { reportWhileWaiting, runMain } from './run';
import { createKeyVault } from '../keys/key-vault';
import { describeLive, providerAvailability } from '../providers/availability';

runMain('platform', async () => {
  const config = loadConfig();
  // Checked before anything is written: a start that cannot run creates no DATA_DIR.
  requireWorkflowBundle(config.WORKFLOW_BUNDLE_PATH);
  // The terminal is the newcomer's: warnings and errors there, the whole log in DATA_DIR/platform.log
  // (LOG_LEVEL, when set, puts that level on the terminal too).
  const consoleLevel = process.env.LOG_LEVEL ? config.LOG_LEVEL : 'warn';
  const log = createLogger(config.LOG_LEVEL, 'platform', { file: path.join(config.dataDir, 'platform.log'), consoleLevel });
  fs.mkdirSync(config.dataDir, { recursive: true });
  const unlockDataDir = lockDataDir(config.dataDir);
  // What has started, stopped in reverse order; a step that takes long says so every 5 s.
  const stops: [string, () => Promise<void>][] = [['data directory lock', async () => unlockDataDir()]];
  const stopAll = async () => {
    for (const [part, stop] of stops.reverse()) {
      await reportWhileWaiting(stop(), () => log.warn({ part }, 'still stopping'))
        .catch((err) => log.error({ part, err: String(err) }, 'stop failed'));
    }
  };

  try {
    // The API comes up last: its port is checked first, so a start on a port another program holds ends before anything starts.
    await ensurePortFree({ port: config.PORT, what: 'The API', setting: 'PORT' });
    let databaseUrl = config.DATABASE_URL;
    if (!databaseUrl) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.PGLITE_PORT });
      stops.push(['embedded PostgreSQL', pg.stop]);
      databaseUrl = pg.url;
    }
    let temporalAddress = config.TEMPORAL_ADDRESS;
    let temporalUi = 'your Temporal cluster UI';
    if (!temporalAddress) {
      log.info('starting the Temporal dev server');
      const dev = await startTemporalDevServer({
        dataDir: config.dataDir, port: config.TEMPORAL_PORT, uiPort: config.TEMPORAL_UI_PORT, namespace: config.TEMPORAL_NAMESPACE,
        codecEndpoint: `http://localhost:${config.PORT}/codec`,
      });
      stops.push(['Temporal dev server', dev.stop]);
      temporalAddress = dev.address;
      temporalUi = dev.uiUrl;
    }

    if (Object.keys(config.EVM_RPC_URLS ?? {}).length === 0) {
      log.info('starting local anvil nodes for the EVM chains');
      const anvil = await startAnvilNodes({ basePort: config.ANVIL_BASE_PORT, mnemonic: config.CHAIN_TREASURY_MNEMONIC, stateDir: path.join(config.dataDir, 'chains') });
      stops.push(['anvil nodes', anvil.stop]);
      config.EVM_RPC_URLS = anvil.urls;
    }
    if (!config.SOLANA_RPC_URL) {
      log.info('starting the sandbox Solana node (LiteSVM)');
      const solana = await startSolanaNode({ port: config.SOLANA_NODE_PORT, mnemonic: config.CHAIN_TREASURY_MNEMONIC, stateDir: path.join(config.dataDir, 'chains'), slotMs: config.SOLANA_SLOT_MS });
      stops.push(['Solana node', solana.stop]);
      config.SOLANA_RPC_URL = solana.url;
    }
    if (!config.BITCOIN_RPC_URL) {
      log.info('starting the sandbox Bitcoin node (btcd, regtest)');
      const bitcoin = await startBitcoinNode({ port: config.BITCOIN_NODE_PORT, mnemonic: config.CHAIN_TREASURY_MNEMONIC, stateDir: path.join(config.dataDir, 'chains'), blockMs: config.BITCOIN_BLOCK_MS });
      stops.push(['Bitcoin node', bitcoin.stop]);
      config.BITCOIN_RPC_URL = bitcoin.url;
    }

    let bankLine: string | undefined;
    if (config.SANDBOX_BANK === 'on') {
      log.info('starting the sandbox bank (an SFTP server and the bank behind it)');
      const bank = await startSandboxBank(config);
      stops.push(['sandbox bank SFTP server', bank.stop]);
      bankLine = `sftp://${bank.username}@${bank.host}:${bank.port} (folders in ${bank.root}); sandbox ACH and SEPA go through its files`;
    }

    // PGlite's one session is shared by every connection: named statements would collide there.
    const db = config.DATABASE_URL
      ? createDb(databaseUrl, config.DATABASE_POOL_SIZE, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS === 'on' })
      : createDb(databaseUrl, 10);
    stops.push(['database pool', () => db.destroy()]);
    await migrateToLatest(db);
    const cipher = createDataCipher(config, { allowGenerated: true });
    const keys = createKeyVault(config, { allowGenerated: true });

    const temporal = await connectTemporalClient(config, temporalAddress, cipher);
    stops.push(['Temporal client', () => temporal.connection.close()]);
    await ensureSchedules(temporal, config.TEMPORAL_TASK_QUEUE, { strayDepositScanSeconds: config.STRAY_DEPOSIT_SCAN_SECONDS, bankFiles: config });
    await ensureWalletWatchers({ config, temporal, db });

    // One in-memory copy of the lists serves the API and the worker of this process.
    const sanctions = configuredScreener(config, db, log);
    stops.push(['sanctions list watch', await sanctions.loadAndWatch(databaseUrl)]);
    const worker = await createWorker({
      sdkLogLevel: consoleLevel,
      address: temporalAddress,
      ...workerSettings(config),
      activityDeps: activityDepsFromConfig(config, { db, cipher, keys, sanctions, temporal, log }),
      log,
    });
    stops.push(['worker', worker.stop]);

    const api = await startApiServer({ config, db, temporal, cipher, keys, log, sanctions });
    stops.push(['API server', api.stop]);

    const sandboxKey = await ensureDefaultSandboxKey(db, config.dataDir);
    const base = `http://localhost:${api.port}`;
    process.stdout.write(
      [
        '',
        'Financial platform is running.',
        `  API:          ${base}/v0`,
        `  OpenAPI:      ${base}/v0/openapi.json`,
        `  Temporal UI:  ${temporalUi}`,
        `  Data:         ${config.dataDir}`,
        `  EVM chains:   ${Object.entries(config.EVM_RPC_URLS ?? {}).map(([c, u]) => `${c} ${u}`).join(', ')}`,
        `  Sandbox key:  ${sandboxKey}`,
        `  Sanctions:    ${sanctionsLine(sanctions)}`,
        `  Live keys:    ${describeLive(providerAvailability(config).live)}`,
        ...(bankLine ? [`  Sandbox bank: ${bankLine}`] : []),
        '',
        `  curl -H "Api-Key: ${sandboxKey}" ${base}/v0/customers`,
        '',
        'Ctrl-C stops everything; data is kept for the next start.',
        '',
      ].join('\n'),
    );
    return { stop: stopAll, done: worker.running };
  } catch (err) {
    await stopAll();
    throw err;
  }
});

/** What the start-up banner says of the sanctions lists: loaded, the shipped snapshot (with its age), or none. */
function sanctionsLine(sanctions: ReturnType<typeof configuredScreener>): string {
  const snapshot = sanctions.snapshot;
  if (snapshot) {
    return `${sanctions.versions.length} lists from the shipped snapshot — WARNING: its oldest list was published ${snapshot.oldestList}, `
      + `${snapshot.ageDays} days ago; run \`npm run cli -- lists sync\` for current lists`;
  }
  return sanctions.ready ? `${sanctions.versions.length} lists loaded` : 'no lists loaded (npm run cli -- lists sync, or SANCTIONS_DATA_DIR)';
}
