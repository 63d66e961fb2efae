import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

/** The chain's reason when an activity failed because the chain refused a payment (a revert, a blocked receiver). */
export function chainRefusal(err: unknown): string | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === 'PayoutRejected' ? cause.message : undefined;
}
