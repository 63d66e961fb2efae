import { Context } from '@temporalio/activity';
import type { Tenant } from '../src/db/tenant-scope';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { recordEvent } from '../src/domain/events';
import { storeScreening } from '../src/sanctions/screenings';
import type { ScreeningQuery } from '../src/sanctions/matcher';
import type { SanctionsScreener } from '../src/sanctions/screener';

export interface BatchEntity {
  name: string;
  type?: 'individual' | 'business';
  country?: string;
  date_of_birth?: string;
}

/** Activities that screen against the sanctions lists held in this worker's memory. */
export function createSanctionsActivities(deps: { db: Db; cipher: DataCipher; sanctions: SanctionsScreener }) {
  return {
    /**
     * Screens a customer for KYC and stores the screening linked to them. `unavailable` when this
     * worker has no lists (the workflow decides what that means for the customer's environment).
     */
    async screenCustomerForKyc(input: { customerId: string }): Promise<{
      status: 'clear' | 'potential_match' | 'unavailable';
      screeningId?: string;
      summary?: string;
      environment: 'sandbox' | 'production';
    }> {
      const c = await deps.db.selectFrom('customers').selectAll().where('id', '=', input.customerId).executeTakeFirstOrThrow();
      if (!deps.sanctions.ready) return { status: 'unavailable', environment: c.environment };
      const query: ScreeningQuery = {
        name: c.type === 'business' ? c.business_name! : [c.first_name, c.last_name].filter(Boolean).join(' '),
        type: c.type,
        dateOfBirth: c.date_of_birth ?? undefined,
        country: c.address?.country,
      };
      const outcome = deps.sanctions.screen(query);
      const tenant: Tenant = { developerId: c.developer_id, environment: c.environment };
      const row = await deps.db.transaction().execute((trx) => storeScreening(trx, deps, tenant, query, outcome, { customerId: c.id }));
      const top = outcome.matches[0];
      return {
        status: outcome.status,
        screeningId: row.id,
        environment: c.environment,
        summary: top ? `${top.score} ${top.matched_name} (${top.source_name})` : undefined,
      };
    },

    /**
     * Screens entities [from, to) of a batch. Idempotent: a retried chunk skips the screenings it
     * already stored (unique batch id + index). Heartbeats so a stuck worker is noticed.
     */
    async screenBatchChunk(input: { batchId: string; from: number; to: number }): Promise<{ screened: number; potentialMatches: number }> {
      const batch = await deps.db.selectFrom('screening_batches').selectAll().where('id', '=', input.batchId).executeTakeFirstOrThrow();
      const entities = JSON.parse(deps.cipher.decryptText(batch.entities_encrypted)) as BatchEntity[];
      const done = new Set(
        (await deps.db.selectFrom('screenings').select('batch_index').where('batch_id', '=', batch.id)
          .where('batch_index', '>=', input.from).where('batch_index', '<', input.to).execute()).map((r) => r.batch_index),
      );
      const tenant: Tenant = { developerId: batch.developer_id, environment: batch.environment };
      let potentialMatches = 0;
      const pending: { query: ScreeningQuery; index: number; outcome: ReturnType<SanctionsScreener['screen']> }[] = [];
      for (let i = input.from; i < input.to; i++) {
        if (done.has(i)) continue;
        const e = entities[i];
        const query: ScreeningQuery = { name: e.name, type: e.type, country: e.country, dateOfBirth: e.date_of_birth };
        const outcome = deps.sanctions.screen(query);
        if (outcome.status === 'potential_match') potentialMatches++;
        pending.push({ query, index: i, outcome });
        if (pending.length % 100 === 0) Context.current().heartbeat({ at: i });
      }
      await deps.db.transaction().execute(async (trx) => {
        const at = new Date();
        for (const p of pending) await storeScreening(trx, deps, tenant, p.query, p.outcome, { batchId: batch.id, batchIndex: p.index }, at);
        await trx
          .updateTable('screening_batches')
          .set((eb) => ({ processed: eb('processed', '+', pending.length), potential_matches: eb('potential_matches', '+', potentialMatches) }))
          .where('id', '=', batch.id)
          .execute();
      });
      return { screened: pending.length, potentialMatches };
    },

    async completeScreeningBatch(input: { batchId: string }): Promise<void> {
      await deps.db.transaction().execute(async (trx) => {
        const batch = await trx.selectFrom('screening_batches').selectAll().where('id', '=', input.batchId).forUpdate().executeTakeFirstOrThrow();
        if (batch.status === 'completed') return;
        const at = new Date();
        await trx.updateTable('screening_batches').set({ status: 'completed', completed_at: at }).where('id', '=', batch.id).execute();
        await recordEvent(trx, { developerId: batch.developer_id, environment: batch.environment }, {
          type: 'screening_batch.completed',
          objectId: batch.id,
          data: { batch_id: batch.id, status: 'completed', total: batch.total, potential_matches: batch.potential_matches },
        }, at);
      });
    },
  };
}

export type SanctionsActivities = ReturnType<typeof createSanctionsActivities>;
