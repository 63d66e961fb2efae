import type { PlatformDeps } from '../deps';
import type { Db } from '../db';
import type { walletWatcherWorkflow } from '../../workflows/wallet-watcher';

export const walletWatcherWorkflowId = (chain: string) => `wallet-watcher:${chain}`;

/** Starts the chain's wallet watcher (once: a second start finds it running). */
export async function startWalletWatcher(deps: Pick<PlatformDeps, 'config' | 'temporal'>, chain: string) {
  await deps.temporal.workflow.start<typeof walletWatcherWorkflow>('walletWatcherWorkflow', {
    workflowId: walletWatcherWorkflowId(chain),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [{ chain, periodMs: deps.config.WALLET_WATCH_PERIOD_MS }],
    staticSummary: `Follow token transfers of every wallet on ${chain}`,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** At every start: the watcher of every chain that holds wallets runs (its start may have been lost with a crash). */
export async function ensureWalletWatchers(deps: Pick<PlatformDeps, 'config' | 'temporal'> & { db: Db }) {
  const chains = await deps.db.selectFrom('chain_watch_cursors').select('chain').execute();
  for (const { chain } of chains) await startWalletWatcher(deps, chain);
}
