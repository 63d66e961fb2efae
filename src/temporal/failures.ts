import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

// Failure types shared by activities, workflows and the API (workflow-safe: no Node imports).

/**
 * The data an activity was given can never be stored or used (PostgreSQL refused it: a data
 * exception or a broken constraint; or it failed validation). Retrying cannot help, so the activity
 * fails at once; a workflow that got the data from an Update refuses that Update and waits for a
 * valid one.
 */
export const INVALID_DATA = 'InvalidData';

/** The reason an activity, or an Update, failed on invalid data; undefined for any other failure. */
export function invalidDataReason(err: unknown): string | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  if (failure instanceof ApplicationFailure && failure.type === INVALID_DATA) return failure.message;
  return undefined;
}

/** Refuses an Update whose data an activity could not store (the caller answers 400). */
export function refuseInvalidData(reason: string): ApplicationFailure {
  return ApplicationFailure.create({ type: INVALID_DATA, message: reason, nonRetryable: true });
}
