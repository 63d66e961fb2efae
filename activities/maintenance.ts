import type { Db } from '../src/db';

/** The 24-hour limits read 25 hours of running totals (src/transfers/volumes.ts); older hours are dropped a day later. */
const TRANSFER_VOLUME_RETENTION_HOURS = 48;

export function createMaintenanceActivities(db: Db, retentionHours: number) {
  return {
    /** Idempotency keys are kept `retentionHours` (24 h by default), then forgotten. */
    async reapExpiredIdempotencyKeys(): Promise<number> {
      const cutoff = new Date(Date.now() - retentionHours * 3600_000);
      const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    /** The hourly running totals of transfers (per customer, per route) that no 24-hour limit reads any more. */
    async reapOldTransferVolumes(): Promise<number> {
      const cutoff = new Date(Date.now() - TRANSFER_VOLUME_RETENTION_HOURS * 3600_000);
      const result = await db.deleteFrom('transfer_volumes').where('hour', '<', cutoff).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
