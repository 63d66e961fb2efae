import { Client, Connection, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config';

export async function connectTemporalClient(config: Pick<Config, 'TEMPORAL_NAMESPACE'>, address: string): Promise<Client> {
  const connection = await Connection.connect({ address, connectTimeout: '10s' });
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
