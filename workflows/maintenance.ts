import { patched, proxyActivities } from '@temporalio/workflow';
import type { MaintenanceActivities } from '../activities/maintenance';

const { reapExpiredIdempotencyKeys, reapOldTransferVolumes } = proxyActivities<MaintenanceActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5 },
});

/**
 * Run hourly by the Temporal schedule `maintenance:reap-idempotency-keys`: expired idempotency keys,
 * then the hourly transfer totals no 24-hour limit reads (runs started before that step skip it).
 * Answers how many idempotency keys went.
 */
export async function reapIdempotencyKeysWorkflow(): Promise<number> {
  const keys = await reapExpiredIdempotencyKeys();
  if (patched('reap-transfer-volumes')) await reapOldTransferVolumes();
  return keys;
}
