import type { Db } from '../src/db';

export function createMaintenanceActivities(db: Db, retentionHours: number) {
  return {
    /** Idempotency keys are kept `retentionHours` (24 h by default), then forgotten. */
    async reapExpiredIdempotencyKeys(): Promise<number> {
      const cutoff = new Date(Date.now() - retentionHours * 3600_000);
      const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type MaintenanceActivities = ReturnType<typeof createMaintenanceActivities>;
