import {
  Client, Connection, ScheduleAlreadyRunning, ScheduleOverlapPolicy, defaultGrpcRetryOptions, makeGrpcRetryInterceptor,
} from '@temporalio/client';
import type { Config } from '../config';

export async function connectTemporalClient(config: Pick<Config, 'TEMPORAL_NAMESPACE'>, address: string): Promise<Client> {
  // An API request must fail fast (503) when Temporal is unreachable, not retry for ~20 s (the SDK default).
  const connection = await Connection.connect({
    address,
    connectTimeout: '10s',
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 4 }))],
  });
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
}

/** Maintenance runs as Temporal schedules, not as loops in our processes. Safe to call at every start. */
export async function ensureSchedules(client: Client, taskQueue: string) {
  try {
    await client.schedule.create({
      scheduleId: 'maintenance:reap-idempotency-keys',
      spec: { intervals: [{ every: '1h' }] },
      action: { type: 'startWorkflow', workflowType: 'reapIdempotencyKeysWorkflow', taskQueue, args: [] },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
}
