import { ActivityFailure, ApplicationFailure, proxyActivities, type RetryPolicy } from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chains';
import { FAILURE } from '../src/temporal/failures';

// How workflows call the chain activities (transfers and stray-deposit returns alike).

/** Retried without end, except a refusal by the chain itself, which is an answer. */
export const chainRetry: RetryPolicy = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [FAILURE.PayoutRejected] };
// Sending is one signed broadcast: a short timeout re-sends the same bytes soon after a crash.
export const chainSend = proxyActivities<ChainActivities>({ startToCloseTimeout: '10 seconds', retry: chainRetry });
// Sweeping and waiting for a payment to be final heartbeat: a lost worker is noticed within seconds.
export const chains = proxyActivities<ChainActivities>({ startToCloseTimeout: '10 minutes', heartbeatTimeout: '10 seconds', retry: chainRetry });

/** The chain's reason when an activity failed because the chain refused a payment (a revert, a blocked receiver). */
export function chainRefusal(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === FAILURE.PayoutRejected ? cause.message : undefined;
}
