import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, WorkflowIdReusePolicy, proxyActivities, startChild } from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chains';
import { returnStrayDepositsWorkflow } from './stray-deposit-return';

const { scanStrayChainDeposits } = proxyActivities<ChainActivities>({
  startToCloseTimeout: '10 minutes', heartbeatTimeout: '1 minute', retry: { maximumAttempts: 3 },
});

/**
 * Run by the Temporal schedule `chains:scan-stray-deposits` (every STRAY_DEPOSIT_SCAN_SECONDS): lists
 * the stray deposits that arrived at deposit addresses no longer watched, and starts the return of
 * every transfer's strays that can go back now (one workflow per transfer; one already running is left to finish).
 */
export async function scanStrayDepositsWorkflow(): Promise<{ found: number; returnsStarted: number }> {
  const { found, transfersToReturn } = await scanStrayChainDeposits();
  let returnsStarted = 0;
  for (const transferId of transfersToReturn) {
    try {
      await startChild(returnStrayDepositsWorkflow, {
        workflowId: `stray-deposits:${transferId}`,
        args: [{ transferId }],
        // The return outlives this scan; a later scan starts another for strays that arrived since.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      });
      returnsStarted++;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return { found, returnsStarted };
}
