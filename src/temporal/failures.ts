import { ActivityFailure, ApplicationFailure } from '@temporalio/common';

// Failure types shared by activities, workflows and the API (workflow-safe: no Node imports).

/**
 * The types of the failures activities throw, named once: activities/failures.ts turns the core's
 * errors into them, retry policies list the non-retryable ones, workflows and the API read them.
 * The two customer-visibility failures are thrown by the KYC activity itself: which one depends on
 * the attempt number, which only the activity knows.
 */
export const FAILURE = {
  /**
   * The data an activity was given can never be stored or used (PostgreSQL refused it: a data
   * exception or a broken constraint; it failed validation; a provider reported an amount that is not
   * one of its currency; an MPC message the protocol refuses). Retrying cannot help, so the activity
   * fails at once; a workflow that got the data from an Update refuses that Update and waits for a
   * valid one.
   */
  InvalidData: 'InvalidData',
  /** The chain refused a payment (a revert, a blocked receiver): an answer, not an outage. */
  PayoutRejected: 'PayoutRejected',
  /** The rail provider did not take a call; retried. */
  RailUnavailable: 'RailUnavailable',
  /** The customer row of a KYC workflow never became visible (its creating transaction rolled back). */
  CustomerNotFound: 'CustomerNotFound',
  /** The customer row is not visible yet (the creating transaction may still commit); retried. */
  CustomerNotVisible: 'CustomerNotVisible',
} as const;

/** The reason an activity, or an Update, failed on invalid data; undefined for any other failure. */
export function invalidDataReason(err: unknown): string | undefined {
  const failure = err instanceof ActivityFailure ? err.cause : err;
  if (failure instanceof ApplicationFailure && failure.type === FAILURE.InvalidData) return failure.message;
  return undefined;
}

/**
 * The Updates a workflow refused because an activity could not store the data they brought (an
 * operator's decision, say), each with why: the main flow records the refusal and waits for another
 * Update; the refused Update's handler then fails with it (the API answers 400).
 */
export class InvalidDataRefusals<T extends object> {
  private readonly reasons = new Map<T, string>();

  /** Records `err` as the refusal of `update` when it is an invalid-data failure; false for any other. */
  refuse(update: T, err: unknown): boolean {
    const reason = invalidDataReason(err);
    if (reason) this.reasons.set(update, reason);
    return reason !== undefined;
  }

  has(update: T): boolean {
    return this.reasons.has(update);
  }

  /** For the Update's handler, once the main flow is done with it: the refusal, if it was refused. */
  throwIfRefused(update: T): void {
    const reason = this.reasons.get(update);
    if (reason) throw ApplicationFailure.create({ type: FAILURE.InvalidData, message: `The decision was not recorded: ${reason}`, nonRetryable: true });
  }
}
