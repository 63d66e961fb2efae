import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import { tenantOf } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import type { ScreeningQuery } from './matcher';
import type { SanctionsScreener } from './screener';
import { storeScreening } from './screenings';

// The screenings workflows run: a customer's at KYC, and a batch's, chunk by chunk.

type ScreeningDeps = { db: Db; cipher: DataCipher; sanctions: SanctionsScreener };

interface BatchEntity {
  name: string;
  type?: 'individual' | 'business';
  country?: string;
  date_of_birth?: string;
}

/**
 * Screens a customer for KYC and stores the screening linked to them. `unavailable` when this
 * process has no lists (the workflow decides what that means for the customer's environment).
 */
export async function screenCustomerForKyc(deps: ScreeningDeps, customerId: string): Promise<{
  status: 'clear' | 'potential_match' | 'unavailable'; screeningId?: string; summary?: string; environment: 'sandbox' | 'production';
}> {
  const c = await deps.db.selectFrom('customers').selectAll().where('id', '=', customerId).executeTakeFirstOrThrow();
  if (!deps.sanctions.readyFor(c.environment)) return { status: 'unavailable', environment: c.environment };
  const query: ScreeningQuery = {
    name: c.type === 'business' ? c.business_name! : [c.first_name, c.last_name].filter(Boolean).join(' '),
    type: c.type,
    dateOfBirth: c.date_of_birth ?? undefined,
    country: c.address?.country,
  };
  const outcome = deps.sanctions.screen(query);
  const row = await storeScreening(deps.db, deps, tenantOf(c), query, outcome, { customerId: c.id });
  const top = outcome.matches[0];
  return {
    status: outcome.status, screeningId: row.id, environment: c.environment,
    summary: top ? `${top.score} ${top.matched_name} (${top.source_name})` : undefined,
  };
}

/**
 * Screens entities [from, to) of a batch. Idempotent: a retried chunk skips the screenings it
 * already stored (unique batch id + index). `onProgress` every 100 entities (the activity heartbeats).
 */
export async function screenBatchChunk(
  deps: ScreeningDeps, input: { batchId: string; from: number; to: number }, onProgress: (at: number) => void,
): Promise<{ screened: number; potentialMatches: number }> {
  const batch = await deps.db.selectFrom('screening_batches').selectAll().where('id', '=', input.batchId).executeTakeFirstOrThrow();
  const entities = JSON.parse(deps.cipher.decryptText(batch.entities_encrypted)) as BatchEntity[];
  const done = new Set(
    (await deps.db.selectFrom('screenings').select('batch_index').where('batch_id', '=', batch.id)
      .where('batch_index', '>=', input.from).where('batch_index', '<', input.to).execute()).map((r) => r.batch_index),
  );
  let potentialMatches = 0;
  const pending: { query: ScreeningQuery; index: number; outcome: ReturnType<SanctionsScreener['screen']> }[] = [];
  for (let i = input.from; i < input.to; i++) {
    if (done.has(i)) continue;
    const e = entities[i];
    const query: ScreeningQuery = { name: e.name, type: e.type, country: e.country, dateOfBirth: e.date_of_birth };
    const outcome = deps.sanctions.screen(query);
    if (outcome.status === 'potential_match') potentialMatches++;
    pending.push({ query, index: i, outcome });
    if (pending.length % 100 === 0) onProgress(i);
  }
  await deps.db.transaction().execute(async (trx) => {
    const at = new Date();
    for (const p of pending) await storeScreening(trx, deps, tenantOf(batch), p.query, p.outcome, { batchId: batch.id, batchIndex: p.index }, at);
    await trx.updateTable('screening_batches')
      .set((eb) => ({ processed: eb('processed', '+', pending.length), potential_matches: eb('potential_matches', '+', potentialMatches), updated_at: at }))
      .where('id', '=', batch.id).execute();
  });
  return { screened: pending.length, potentialMatches };
}

/** Marks the batch completed and announces it (`screening_batch.completed`), once. */
export async function completeScreeningBatch(db: Db, batchId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const batch = await trx.selectFrom('screening_batches').selectAll().where('id', '=', batchId).forUpdate().executeTakeFirstOrThrow();
    if (batch.status === 'completed') return;
    const at = new Date();
    await trx.updateTable('screening_batches').set({ status: 'completed', completed_at: at, updated_at: at }).where('id', '=', batch.id).execute();
    await recordEvent(trx, tenantOf(batch), {
      type: 'screening_batch.completed',
      objectId: batch.id,
      data: { batch_id: batch.id, status: 'completed', total: batch.total, potential_matches: batch.potential_matches },
    }, at);
  });
}
