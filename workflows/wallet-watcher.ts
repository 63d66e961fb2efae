import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { WalletWatchActivities } from '../activities/wallet-watch';
import { chainWatchTaskQueue } from '../src/temporal/task-queues';

export interface WalletWatcherInput {
  chain: string;
  /** How long one watch activity runs (it looks at the chain every poll interval meanwhile). */
  periodMs: number;
}

/** Activities per run before the history starts afresh (continue-as-new). */
const PERIODS_PER_RUN = 100;

/**
 * `wallet-watcher:{chain}`: one per chain that holds wallets, for all of them at once
 * (src/wallets/watcher.ts). Each period is one long activity; where it has read to is a row in
 * `chain_watch_cursors`, so a worker that dies mid-period loses nothing and records nothing twice.
 */
export async function walletWatcherWorkflow(input: WalletWatcherInput): Promise<void> {
  const { watchWalletTransfers } = proxyActivities<WalletWatchActivities>({
    taskQueue: chainWatchTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: input.periodMs + 120_000,
    // Beats after every read of the chain: a worker that died is noticed within this.
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  for (let i = 0; i < PERIODS_PER_RUN; i++) {
    await watchWalletTransfers({ chain: input.chain, maxWaitMs: input.periodMs });
  }
  await continueAsNew<typeof walletWatcherWorkflow>(input);
}
