import { Worker } from '@temporalio/worker';
import { temporalClient, testDb, workflowBundle } from './index';

/**
 * Replays, on the current workflow code, the histories of every MPC session of a wallet and of the
 * transfers whose signatures they were; expects no non-determinism and answers how many replayed.
 */
export async function replayWalletHistories(walletId: string): Promise<number> {
  const sessions = await testDb().selectFrom('mpc_sessions').select(['id', 'transfer_id']).where('wallet_id', '=', walletId).execute();
  const ids = [...sessions.map((s) => `mpc-session:${s.id}`), ...sessions.flatMap((s) => (s.transfer_id ? [`transfer:${s.transfer_id}`] : []))];
  const client = await temporalClient();
  const histories = await Promise.all(ids.map(async (workflowId) => ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() })));
  let replayed = 0;
  for await (const result of Worker.runReplayHistories(workflowBundle(), histories)) {
    expect([result.workflowId, result.error]).toEqual([result.workflowId, undefined]);
    replayed++;
  }
  return replayed;
}
