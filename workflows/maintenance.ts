import { proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance';

const { reapExpiredIdempotencyKeys } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5 },
});

/** Run hourly by the Temporal schedule `maintenance:reap-idempotency-keys`. */
export async function reapIdempotencyKeysWorkflow(): Promise<number> {
  return reapExpiredIdempotencyKeys();
}
