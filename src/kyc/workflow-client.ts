import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import type { PlatformDeps } from '../deps';
import { sendUpdate, type WorkflowDeps } from '../temporal/workflow-answers';
import { CustomerIdAttr, KycStatusAttr } from '../temporal/search-attributes';
import type { kycWorkflow } from '../../workflows/kyc';
import {
  closeKyc, decideManualReview, submitKycDocuments, type KycState, type KycSubmission, type KycWorkflowInput, type OperatorDecision,
} from '../../workflows/kyc-messages';

export const kycWorkflowId = (customerId: string) => `kyc:${customerId}`;

function startOptions(deps: Pick<PlatformDeps, 'config'>, input: KycWorkflowInput) {
  return {
    workflowId: kycWorkflowId(input.customerId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [input] as [KycWorkflowInput],
    typedSearchAttributes: [
      { key: CustomerIdAttr, value: input.customerId },
      { key: KycStatusAttr, value: 'not_started' },
    ],
    staticSummary: `KYC of customer ${input.customerId} (${input.customerType})`,
  };
}

export async function closeKycWorkflow(deps: Pick<PlatformDeps, 'temporal'>, customerId: string) {
  try {
    await deps.temporal.workflow.getHandle(kycWorkflowId(customerId)).signal(closeKyc);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err; // KYC already finished
  }
}

/**
 * Hands a stored submission to the workflow, starting it with the first one (KYC is initiated then:
 * not_started → pending; creating a customer starts nothing). Update-with-Start makes the start and
 * the hand-over one call; the update id makes a retried call a no-op.
 */
export async function submitToKycWorkflow(
  deps: Pick<PlatformDeps, 'config' | 'temporal'>,
  input: KycWorkflowInput,
  submission: KycSubmission,
): Promise<KycState> {
  return sendUpdate(deps, { afterwards: "read the customer's kyc_status before you submit again", whenFinished: 'KYC for this customer is already finished' },
    () => deps.temporal.workflow.executeUpdateWithStart(submitKycDocuments, {
      args: [submission],
      updateId: submission.submissionId,
      startWorkflowOperation: new WithStartWorkflowOperation<typeof kycWorkflow>('kycWorkflow', {
        ...startOptions(deps, input),
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    }));
}

export function decideKyc(deps: WorkflowDeps, customerId: string, decision: OperatorDecision) {
  return sendUpdate(deps, { afterwards: "read the customer's kyc_status before you decide again", whenFinished: 'KYC is not waiting for a manual review decision', dataField: 'reasons' },
    () => deps.temporal.workflow.getHandle(kycWorkflowId(customerId)).executeUpdate(decideManualReview, { args: [decision] }));
}
