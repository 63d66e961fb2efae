import type { Kysely, Selectable, Transaction } from 'kysely';
import type { ChainSweepsTable, Database } from '../db/schema';

// Chain sweeps move a deposit from its deposit address into the treasury (src/chains/evm/sweeps.ts):
// each transaction is stored here, signed, before it is broadcast.

type Queryable = Kysely<Database> | Transaction<Database>;
export type SweepRow = Selectable<ChainSweepsTable>;

/** Starts the sweep once: a later call with its key (a retry) finds the one started. */
export async function startSweep(
  q: Queryable, s: Pick<SweepRow, 'sweep_key' | 'transfer_id' | 'chain' | 'currency' | 'from_address' | 'amount_minor'>,
): Promise<SweepRow> {
  const now = new Date();
  await q.insertInto('chain_sweeps').values({
    ...s, gas_signed_transaction: null, gas_tx_hash: null, sweep_signed_transaction: null, sweep_tx_hash: null, status: 'pending', created_at: now, updated_at: now,
  }).onConflict((oc) => oc.column('sweep_key').doNothing()).execute();
  return sweepByKey(q, s.sweep_key);
}

export function sweepByKey(q: Queryable, sweepKey: string, opts: { forUpdate?: boolean } = {}): Promise<SweepRow> {
  let query = q.selectFrom('chain_sweeps').selectAll().where('sweep_key', '=', sweepKey);
  if (opts.forUpdate) query = query.forUpdate();
  return query.executeTakeFirstOrThrow();
}

/** Stores the sweep's gas or token transaction, signed, before it is broadcast. */
export async function storeSweepTransaction(q: Queryable, sweepKey: string, which: 'gas' | 'sweep', signed: string, txHash: string): Promise<void> {
  await q.updateTable('chain_sweeps').set(which === 'gas'
    ? { gas_signed_transaction: signed, gas_tx_hash: txHash, updated_at: new Date() }
    : { sweep_signed_transaction: signed, sweep_tx_hash: txHash, updated_at: new Date() })
    .where('sweep_key', '=', sweepKey).execute();
}

export async function markSwept(q: Queryable, sweepKey: string): Promise<void> {
  await q.updateTable('chain_sweeps').set({ status: 'swept', updated_at: new Date() }).where('sweep_key', '=', sweepKey).execute();
}

/** Another sweep from the same address has a transaction out and is not swept yet. */
export async function otherSweepOut(q: Queryable, sweep: Pick<SweepRow, 'sweep_key' | 'chain' | 'from_address'>): Promise<boolean> {
  const other = await q.selectFrom('chain_sweeps').select('sweep_key')
    .where('chain', '=', sweep.chain).where('from_address', '=', sweep.from_address).where('sweep_key', '<>', sweep.sweep_key)
    .where('status', '=', 'pending').where((eb) => eb.or([eb('gas_signed_transaction', 'is not', null), eb('sweep_signed_transaction', 'is not', null)]))
    .limit(1).executeTakeFirst();
  return Boolean(other);
}
