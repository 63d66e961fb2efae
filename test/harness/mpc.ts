import type { Payload } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { stackDataConverter, temporalClient, testDb, workflowBundle } from './index';

/** The workflow ids replayed, and those that had no history (a signing canceled before its session's workflow started). */
export interface ReplayedHistories {
  replayed: string[];
  withoutHistory: string[];
}

/**
 * Replays, on the current workflow code, the histories of every MPC session of a wallet and of the
 * transfers whose signatures they were; expects no non-determinism.
 */
export async function replayWalletHistories(walletId: string): Promise<ReplayedHistories> {
  const sessions = await testDb().selectFrom('mpc_sessions').select(['id', 'transfer_id']).where('wallet_id', '=', walletId).execute();
  const ids = [...sessions.map((s) => `mpc-session:${s.id}`), ...sessions.flatMap((s) => (s.transfer_id ? [`transfer:${s.transfer_id}`] : []))];
  const client = await temporalClient();
  const fetched = await Promise.all(ids.map(async (workflowId) => ({
    workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory().catch((err) => { if ((err as { code?: number }).code === 5) return null; throw err; }),
  })));
  const histories = fetched.filter((h): h is { workflowId: string; history: NonNullable<typeof h.history> } => h.history !== null);
  const replayed: string[] = [];
  for await (const result of Worker.runReplayHistories(workflowBundle(), histories)) {
    expect([result.workflowId, result.error]).toEqual([result.workflowId, undefined]);
    replayed.push(result.workflowId);
  }
  return { replayed, withoutHistory: fetched.filter((h) => h.history === null).map((h) => h.workflowId) };
}

/** Every payload of a workflow's history, decoded by the stack's codec (as an operator in the Web UI sees them), as text. */
export async function decodedHistoryText(workflowId: string): Promise<string> {
  const history = await (await temporalClient()).workflow.getHandle(workflowId).fetchHistory();
  const payloads: Payload[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const candidate = node as { data?: unknown; metadata?: unknown };
    if (candidate.data instanceof Uint8Array && candidate.metadata && typeof candidate.metadata === 'object') payloads.push(node as Payload);
    else for (const value of Object.values(node)) walk(value);
  };
  walk(history);
  const codec = stackDataConverter().payloadCodecs![0]!;
  const decoded = await codec.decode(payloads);
  return decoded.map((p) => Buffer.from(p.data ?? new Uint8Array()).toString('utf8')).join('\n');
}
