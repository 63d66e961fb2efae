// Production worker process: `npm run start:worker`. Needs DATABASE_URL, TEMPORAL_ADDRESS and DATA_ENCRYPTION_KEY.
import { loadConfig } from '../src/config';
import { createDataCipher } from '../src/crypto';
import { createDb } from '../src/db';
import { createLogger } from '../src/logger';
import { configuredScreener } from '../src/sanctions/screener';
import { activityDepsFromConfig, createWorker, requireWorkflowBundle, workerSettings } from './create-worker';
import { runMain } from '../src/main/run';
import { connectTemporalClient, temporalAuthOptions } from '../src/temporal/client';
import { createKeyVault } from '../src/keys/key-vault';

runMain('worker', async () => {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, 'worker');
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is required for the worker (npm start runs the embedded stack)');
  if (!config.TEMPORAL_ADDRESS) throw new Error('TEMPORAL_ADDRESS is required for the worker');
  requireWorkflowBundle(config.WORKFLOW_BUNDLE_PATH);
  const db = createDb(config.DATABASE_URL, config.DATABASE_POOL_SIZE, { preparedStatements: config.DATABASE_PREPARED_STATEMENTS === 'on' });
  const cipher = createDataCipher(config, { allowGenerated: false });
  const keys = createKeyVault(config, { allowGenerated: false });
  // Batch and KYC screening run here, against lists held in this process's memory.
  const sanctions = configuredScreener(config, db, log);
  const stopWatching = await sanctions.loadAndWatch(config.DATABASE_URL);
  // Activities that tell workflows of what a bank's files say (rail events) use a client.
  const temporal = await connectTemporalClient(config, config.TEMPORAL_ADDRESS, cipher);
  const worker = await createWorker({
    address: config.TEMPORAL_ADDRESS,
    auth: temporalAuthOptions(config),
    ...workerSettings(config),
    activityDeps: activityDepsFromConfig(config, { db, cipher, keys, sanctions, temporal, log }),
    log,
    // The SDK's metrics (task latencies, slots, poll results) for Prometheus: docs/DEPLOYMENT.md.
    metricsAddress: config.TEMPORAL_METRICS_ADDRESS,
  });
  log.info({ task_queue: config.TEMPORAL_TASK_QUEUE }, 'worker started');
  return {
    done: worker.running,
    stop: async () => {
      await worker.stop();
      await temporal.connection.close();
      await stopWatching();
      await db.destroy();
    },
  };
});
