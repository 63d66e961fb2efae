import type { PlatformDeps } from '../deps';
import type { Tenant } from '../db/tenant-scope';
import { sendUpdate, type WorkflowDeps } from '../temporal/workflow-answers';
import { CustomerIdAttr, ExternalAccountStatusAttr } from '../temporal/search-attributes';
import type { microDepositVerificationWorkflow } from '../../workflows/micro-deposit-verification';
import { verifyMicroDeposits, type VerifyResult } from '../../workflows/micro-deposit-messages';

export const verificationWorkflowId = (externalAccountId: string) => `external-account-verification:${externalAccountId}`;

export const MAX_VERIFICATION_ATTEMPTS = 3;

/** Sandbox account numbers that begin with this wait for the ACH settlement schedule; others verify at once. */
export const SCHEDULED_SANDBOX_ACCOUNT_PREFIX = '999';

/**
 * Starts micro-deposit verification. In the sandbox its expiry runs on the sandbox clock, and the
 * deposits are the test amounts, answerable at once, unless the account number asks for the schedule.
 */
export async function startMicroDepositVerification(
  deps: Pick<PlatformDeps, 'config' | 'temporal'>, tenant: Tenant, account: { id: string; customerId: string; accountNumber: string },
) {
  const instantSandbox = tenant.environment === 'sandbox' && !account.accountNumber.startsWith(SCHEDULED_SANDBOX_ACCOUNT_PREFIX);
  const expiryMs = deps.config.MICRO_DEPOSIT_EXPIRY_HOURS * 3600_000 / (tenant.environment === 'sandbox' ? deps.config.SANDBOX_TIME_SCALE : 1);
  await deps.temporal.workflow.start<typeof microDepositVerificationWorkflow>('microDepositVerificationWorkflow', {
    workflowId: verificationWorkflowId(account.id),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [{ externalAccountId: account.id, customerId: account.customerId, expiryMs: Math.round(expiryMs), maxAttempts: MAX_VERIFICATION_ATTEMPTS, ...(instantSandbox && { instantSandbox }) }],
    typedSearchAttributes: [
      { key: CustomerIdAttr, value: account.customerId },
      { key: ExternalAccountStatusAttr, value: 'pending_verification' },
    ],
    staticSummary: `Micro-deposit verification of ${account.id}`,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** The customer's answer, as a Temporal Update: the outcome comes back in the response. */
export function submitVerificationAmounts(deps: WorkflowDeps, externalAccountId: string, amountsMinor: number[]): Promise<VerifyResult> {
  // A repeat counts as another attempt: after a 503 the account's status tells whether the first counted.
  return sendUpdate(deps, { afterwards: "read the external account's status before you send the amounts again", whenFinished: 'Verification is already final' },
    () => deps.temporal.workflow.getHandle(verificationWorkflowId(externalAccountId)).executeUpdate(verifyMicroDeposits, { args: [amountsMinor] }));
}
