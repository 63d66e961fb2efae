import {
  ActivityFailure, ApplicationFailure, log, proxyActivities, proxyLocalActivities, TimeoutFailure, upsertSearchAttributes,
  type ActivityInput, type ActivityOptions, type LocalActivityInput, type LocalActivityOptions, type Next,
  type WorkflowInterceptorsFactory, type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { RetryState, TimeoutType } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { StuckActivityAttr } from '../src/temporal/search-attributes';

/**
 * Attempts after which an activity that keeps failing is shown to operators: about 23 s of retries
 * for the database writes (200 ms doubling up to 10 s), about 2 minutes for calls to providers and
 * chains (1 s doubling up to 1 minute).
 */
export const ALARM_AFTER_ATTEMPTS = 8;
/** Local activities wait out longer backoffs on timers, not inside their workflow task. */
const LOCAL_RETRY_THRESHOLD = '2 seconds';
/** Past the alarm, retries slow down to at most one every 10 minutes, so a long outage adds few events to a history. */
const ALARMED_MAXIMUM_INTERVAL_MS = 10 * 60_000;

/**
 * Every activity without a bound of its own (no maximumAttempts) retries at most ALARM_AFTER_ATTEMPTS
 * times as its workflow asked. If it still fails, the workflow raises an alarm (the `StuckActivity`
 * search attribute names it; `npm run cli -- workflows stuck` lists such workflows) and the same call
 * goes on without end, slower; the alarm clears when it succeeds. A local activity waits out backoffs
 * over 2 s (and every one past the alarm) on timers, so it does not hold its workflow task (and a
 * worker slot) while it waits.
 * Failures that are answers (non-retryable, timeouts of a bounded call) reach the workflow at once.
 */
class RetryAlarm implements WorkflowOutboundCallsInterceptor {
  private readonly stuck = new Map<string, number>();

  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return this.call(input.activityType, input.options,
      (options) => next({ ...input, options }),
      (options) => proxyActivities(options)[input.activityType](...input.args));
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>) {
    return this.call(input.activityType, { localRetryThreshold: LOCAL_RETRY_THRESHOLD, ...input.options },
      (options) => next({ ...input, options }),
      (options) => proxyLocalActivities({ ...options, localRetryThreshold: '1 second' })[input.activityType](...input.args));
  }

  private async call<O extends ActivityOptions | LocalActivityOptions>(
    activityType: string, options: O, first: (options: O) => Promise<unknown>, again: (options: O) => Promise<unknown>,
  ): Promise<unknown> {
    const retry = options.retry ?? {};
    if (retry.maximumAttempts !== undefined) return first(options);
    try {
      return await first({ ...options, retry: { ...retry, maximumAttempts: ALARM_AFTER_ATTEMPTS } });
    } catch (err) {
      if (!retriesExhausted(err, retry.nonRetryableErrorTypes ?? [])) throw err;
      this.raise(activityType, err);
    }
    try {
      const slowest = Math.max(msToNumber(retry.maximumInterval ?? 0), 1_000);
      return await again({
        ...options,
        retry: { ...retry, initialInterval: slowest, backoffCoefficient: 2, maximumInterval: Math.max(slowest, ALARMED_MAXIMUM_INTERVAL_MS), maximumAttempts: Infinity },
      });
    } finally {
      this.clear(activityType);
    }
  }

  private raise(activityType: string, err: unknown) {
    this.stuck.set(activityType, (this.stuck.get(activityType) ?? 0) + 1);
    log.warn('activity still failing after its alarm threshold; retrying without end', {
      activityType, attempts: ALARM_AFTER_ATTEMPTS, lastFailure: (err instanceof ActivityFailure ? err.cause : (err as Error))?.message,
    });
    this.show();
  }

  private clear(activityType: string) {
    const left = (this.stuck.get(activityType) ?? 1) - 1;
    if (left > 0) this.stuck.set(activityType, left);
    else this.stuck.delete(activityType);
    this.show();
  }

  private show() {
    const names = [...this.stuck.keys()].sort().join(',');
    upsertSearchAttributes([{ key: StuckActivityAttr, value: names || null }]);
  }
}

/**
 * The activity failed retryably on its last allowed attempt (not with an answer such as a
 * non-retryable error or a cancellation). A local activity's last failure may reach the workflow
 * as it is, without the ActivityFailure around it and without a retry state: judged by itself.
 */
function retriesExhausted(err: unknown, nonRetryableTypes: string[]): boolean {
  if (err instanceof ActivityFailure && err.retryState) return err.retryState === RetryState.MAXIMUM_ATTEMPTS_REACHED;
  const last = err instanceof ActivityFailure ? err.cause : err;
  if (last instanceof TimeoutFailure) return last.timeoutType === TimeoutType.START_TO_CLOSE;
  return last instanceof ApplicationFailure && !last.nonRetryable && !nonRetryableTypes.includes(last.type ?? '');
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [new RetryAlarm()] });
