import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import type { Config } from '../src/config';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { createMoneyProviders } from '../src/providers';
import type { SanctionsScreener } from '../src/sanctions/screener';

/** What the activities need, from the configuration and the process's shared resources. */
export function activityDepsFromConfig(config: Config, shared: { db: Db; cipher: DataCipher; sanctions: SanctionsScreener }): ActivityDeps {
  return {
    ...shared,
    idempotencyRetentionHours: config.IDEMPOTENCY_RETENTION_HOURS,
    providers: createMoneyProviders(config, shared.db),
    transferLimits: { reviewThresholdUsd: config.TRANSFER_REVIEW_THRESHOLD_USD, dailyLimitUsd: config.TRANSFER_DAILY_LIMIT_USD },
    // Every second on a sped-up sandbox clock (local chains mine a block a second); else every 5 s.
    chainPollMs: config.SANDBOX_TIME_SCALE > 1 ? 500 : 5_000,
  };
}

/** One worker polls the platform task queue for every workflow and activity; it runs once created. */
export async function createWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  activityDeps: ActivityDeps;
}) {
  const connection = await NativeConnection.connect({ address: opts.address });
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities(opts.activityDeps),
    maxConcurrentActivityTaskExecutions: 200,
  });
  const running = worker.run();
  return {
    worker,
    running,
    /** Lets in-flight tasks finish, then closes the connection. The SDK itself starts the shutdown on SIGINT/SIGTERM. */
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
