// Production API process: `npm run start:api`. Needs DATABASE_URL, TEMPORAL_ADDRESS, DATA_ENCRYPTION_KEY and WALLET_KEK.
import { startApiServer } from '../api/server';
import { loadConfig } from '../config';
import { createDataCipher } from '../crypto';
import { createDb, migrateToLatest } from '../db';
import { createKeyVault } from '../keys/key-vault';
import { createLogger } from '../logger';
import { configuredScreener } from '../sanctions/screener';
import { connectTemporalClient, ensureSchedules } from '../temporal/client';
import { ensureWalletWatchers } from '../wallets/workflow-client';
import { runMain } from './run';

runMain('api', async () => {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'api');
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required for the API (npm start runs the embedded stack)');
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is required for the API');
  const cipher = createDataCipher(config, { allowGenerated: false });
  const keys = createKeyVault(config, { allowGenerated: false });
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS === 'on' });
  await migrateToLatest(db);
  const temporal = await connectTemporalClient(config, config.TEMPORAL_ADDRESS, cipher);
  await ensureSchedules(temporal, config.TEMPORAL_TASK_QUEUE, { strayDepositScanSeconds: config.STRAY_DEPOSIT_SCAN_SECONDS, bankFiles: config });
  await ensureWalletWatchers({ config, temporal, db });
  const sanctions = configuredScreener(config, db, log);
  const stopWatching = await sanctions.loadAndWatch(config.DATABASE_URL);
  const api = await startApiServer({ config, db, temporal, cipher, keys, log, sanctions });
  log.info({ port: api.port }, 'api listening');
  return {
    stop: async () => {
      await api.stop();
      await stopWatching();
      await temporal.connection.close();
      await db.destroy();
    },
  };
});
