import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import type { PlatformDeps } from '../deps';
import { invalidDataReason } from './failures';
import { ApiError, invalidState } from '../errors';

/**
 * Sends an Update and waits at most WORKFLOW_ANSWER_TIMEOUT_SECONDS for the workflow's answer; no
 * answer is a 503. A workflow answers only while a worker runs; without a bound the SDK asks again
 * until one does, and the request hangs with it. The workflow may still take the Update once a
 * worker is back, so `afterwards` tells the caller how to go on safely (send the same again, or read
 * the resource first).
 */
export async function awaitWorkflowAnswer<T>(deps: WorkflowDeps, afterwards: string, send: () => Promise<T>): Promise<T> {
  const seconds = deps.config.WORKFLOW_ANSWER_TIMEOUT_SECONDS;
  try {
    return await deps.temporal.withDeadline(Date.now() + seconds * 1000, send);
  } catch (err) {
    // Past the deadline the SDK reports our own DEADLINE_EXCEEDED, the server's, or CANCELLED when the
    // server's side of the call was cut first: all three mean no answer yet.
    if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
      throw new ApiError('service_unavailable',
        `The workflow did not answer within ${seconds} s (is a worker running?) and may still act on this once it does; ${afterwards}`,
        undefined, { 'Retry-After': '1' });
    }
    throw err;
  }
}

export type WorkflowDeps = Pick<PlatformDeps, 'temporal' | 'config'>;

/** The workflow is no longer running (or never was). */
export function isWorkflowFinished(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return e?.name === 'WorkflowNotFoundError' || /already completed/i.test(e?.message ?? '');
}

/**
 * Sends an Update for an API request: no answer in time is a 503 (awaitWorkflowAnswer), a refusal
 * (the validator's message) a 409, data the workflow could not store a 400 naming `dataField` of the
 * body, and a finished workflow a 409 that says `whenFinished`.
 */
export async function sendUpdate<T>(
  deps: WorkflowDeps, opts: { afterwards: string; whenFinished: string; dataField?: string }, send: () => Promise<T>,
): Promise<T> {
  try {
    return await awaitWorkflowAnswer(deps, opts.afterwards, send);
  } catch (err) {
    const invalidData = err instanceof WorkflowUpdateFailedError ? invalidDataReason(err.cause) : undefined;
    if (invalidData) throw new ApiError('invalid_request', invalidData, opts.dataField ? { location: 'body', key: opts.dataField } : undefined);
    if (err instanceof WorkflowUpdateFailedError) throw invalidState((err.cause as Error | undefined)?.message ?? err.message);
    if (isWorkflowFinished(err)) throw invalidState(opts.whenFinished);
    throw err;
  }
}
