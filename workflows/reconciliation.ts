import { proxyActivities, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities/reconciliation';
import { ReconciliationBreakAttr } from '../src/temporal/search-attributes';

const { reconcileStatementsReceived, announceReconciliationBreak } = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '10 minutes',
  // The run heartbeats as it goes: an attempt lost with a crashed worker is tried again after 30 s, not 10 minutes.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Run by the schedule `reconciliation:daily` at the hour the bank's statements are due: every
 * statement received since the last run reconciled, and the alarm raised for a statement that never
 * came or exceptions opened (search attribute ReconciliationBreak, event `reconciliation.break`).
 */
export async function dailyReconciliationWorkflow(): Promise<{ reportId: string; breaks: string[] }> {
  const report = await reconcileStatementsReceived({ runKey: workflowInfo().workflowId });
  if (report.breaks.length === 0) {
    setCurrentDetails(`Report ${report.id}: no break`);
    return { reportId: report.id, breaks: [] };
  }
  upsertSearchAttributes([{ key: ReconciliationBreakAttr, value: report.breaks.join(',') }]);
  setCurrentDetails(`Report ${report.id}: ${report.breaks.join(', ')}`);
  await announceReconciliationBreak({ reportId: report.id });
  return { reportId: report.id, breaks: report.breaks };
}
