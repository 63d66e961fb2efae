import { Context } from '@temporalio/activity';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import type { SanctionsScreener } from '../src/sanctions/screener';
import { completeScreeningBatch, screenBatchChunk, screenCustomerForKyc } from '../src/sanctions/workflow-screenings';

/** Activities that screen against the sanctions lists held in this worker's memory (src/sanctions/workflow-screenings.ts). */
export function createSanctionsActivities(deps: { db: Db; cipher: DataCipher; sanctions: SanctionsScreener }) {
  return {
    /** Screens a customer for KYC; `unavailable` when this worker has no lists. */
    async screenCustomerForKyc(input: { customerId: string }) {
      return screenCustomerForKyc(deps, input.customerId);
    },

    /** Screens entities [from, to) of a batch, heartbeating so a stuck worker is noticed. */
    async screenBatchChunk(input: { batchId: string; from: number; to: number }): Promise<{ screened: number; potentialMatches: number }> {
      return screenBatchChunk(deps, input, (at) => Context.current().heartbeat({ at }));
    },

    async completeScreeningBatch(input: { batchId: string }): Promise<void> {
      await completeScreeningBatch(deps.db, input.batchId);
    },
  };
}

export type SanctionsActivities = ReturnType<typeof createSanctionsActivities>;
