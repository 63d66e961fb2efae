import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import type { PlatformDeps } from '../deps';
import { invalidDataReason } from './failures';
import { ApiError, invalidState } from '../errors';

/**
 * Sends an Update and waits at most WORKFLOW_ANSWER_TIMEOUT_SECONDS for the workflow's answer; no
 * answer is a 503. A workflow answers only while a worker runs; without a bound the SDK asks again
 * until one does, and the request hangs with it. The workflow may still take the Update once a
 * worker is back, so `afterwards` tells the caller how to go on safely (send the same again, or read
 * the resource first). An Update the server gave up on because the workflow's task failed (a worker
 * too loaded to finish it in time) was never taken: it is sent again until the deadline.
 */
export async function awaitWorkflowAnswer<T>(deps: WorkflowDeps, afterwards: string, send: () => Promise<T>): Promise<T> {
  const seconds = deps.config.WORKFLOW_ANSWER_TIMEOUT_SECONDS;
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    try {
      return await deps.temporal.withDeadline(deadline, send);
    } catch (err) {
      const dropped = updateDroppedByServer(err);
      if (dropped && Date.now() + RESEND_AFTER_MS < deadline) {
        await new Promise((resolve) => setTimeout(resolve, RESEND_AFTER_MS));
        continue;
      }
      // Past the deadline the SDK reports our own DEADLINE_EXCEEDED, the server's, or CANCELLED when the
      // server's side of the call was cut first: all three mean no answer yet.
      if (dropped || err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
        throw new ApiError('service_unavailable',
          `The workflow did not answer within ${seconds} s (is a worker running?) and may still act on this once it does; ${afterwards}`,
          undefined, { 'Retry-After': '1' });
      }
      throw err;
    }
  }
}

const RESEND_AFTER_MS = 500;

/**
 * The server dropped the Update before the workflow took it: the workflow task that carried it failed
 * or timed out (gRPC FAILED_PRECONDITION, "…due to unexpected workflow task failure"), or the server
 * aborted it (UNAVAILABLE, "workflow update was aborted").
 */
export function updateDroppedByServer(err: unknown): boolean {
  const e = err as { name?: string; cause?: { code?: number; message?: string; details?: string } };
  if (e?.name !== 'ServiceError' || !e.cause) return false;
  const text = `${e.cause.message ?? ''} ${e.cause.details ?? ''}`;
  return (e.cause.code === 9 && /workflow task failure/i.test(text)) || (e.cause.code === 14 && /update was aborted/i.test(text));
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
