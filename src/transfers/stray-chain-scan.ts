import type { ChainAdapters } from '../chains';
import { ChainUnavailableError } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { ChainRail } from '../domain/rails';
import { chainStrayReturnCandidates, settledDeposits } from '../payments/store';
import { recordStrayChainDeposits } from './stray-deposits';

/**
 * Reads the deposit addresses of transfers that no longer wait for their deposit (funded, canceled
 * or expired, created within `watchMs`) for token transfers that arrived since, and lists each as a
 * stray deposit. Answers the transfers whose strays can go back now: their address is no longer
 * swept by their own workflow, so two sweeps never spend its nonces at once. `onProgress` is called
 * after each look at a chain (the activity heartbeats).
 */
export async function scanStrayChainDeposits(
  deps: { db: Db; chains: ChainAdapters }, watchMs: number, onProgress: () => void,
): Promise<{ found: number; transfersToReturn: string[] }> {
  let found = 0; // read this time (each is listed once, however often it is read)
  for (const batch of await watchedAddressBatches(deps, watchMs)) {
    found += await scanBatch(deps, batch, onProgress);
  }
  return { found, transfersToReturn: await transfersWithStraysToReturn(deps) };
}

/** The watched transfers by chain and currency, up to 200 addresses per batch: one query reads a batch. */
async function watchedAddressBatches(deps: { db: Db; chains: ChainAdapters }, watchMs: number) {
  const watched = await deps.db.selectFrom('transfers')
    .select(['id', 'source_rail', 'source_currency', 'deposit_address', 'source_position', 'stray_scan_position'])
    .where('source_rail', 'in', Object.keys(deps.chains)).where('deposit_address', 'is not', null).where('source_position', 'is not', null)
    .where('state', '<>', 'awaiting_funds').where('created_at', '>=', new Date(Date.now() - watchMs))
    .orderBy('id').execute();
  const groups = new Map<string, typeof watched>();
  for (const t of watched) {
    const key = `${t.source_rail}|${t.source_currency}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const batches: (typeof watched)[] = [];
  for (const transfers of groups.values()) {
    for (let i = 0; i < transfers.length; i += 200) batches.push(transfers.slice(i, i + 200));
  }
  return batches;
}

type WatchedBatch = Awaited<ReturnType<typeof watchedAddressBatches>>[number];

/**
 * Reads one batch from the earliest position among its transfers (the others re-read a few blocks,
 * which records nothing twice) until the scan has caught up, for at most 20 looks.
 */
async function scanBatch(deps: { db: Db; chains: ChainAdapters }, batch: WatchedBatch, onProgress: () => void): Promise<number> {
  const rail = batch[0]!.source_rail as ChainRail;
  const currency = batch[0]!.source_currency;
  let found = 0;
  let position = batch.map((t) => t.stray_scan_position ?? t.source_position!).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
  const deposits = await settledDeposits(deps.db, batch.map((t) => t.id));
  for (let reads = 0; reads < 20; reads++) {
    const scan = await deps.chains[rail].findTransfersTo({ currency, addresses: batch.map((t) => t.deposit_address!), fromPosition: position })
      .catch((err: Error) => {
        // A chain no longer configured here (no RPC address): the others are still read.
        if (err instanceof ChainUnavailableError) return null;
        throw err;
      });
    if (!scan) break;
    for (const t of batch) {
      const own = deposits.find((d) => d.transfer_id === t.id)?.tx_hash?.toLowerCase();
      const strays = scan.transfers.filter((x) => x.to.toLowerCase() === t.deposit_address!.toLowerCase() && x.txHash.toLowerCase() !== own);
      if (strays.length > 0) await recordStrayChainDeposits(deps.db, t.id, strays, false);
      found += strays.length;
    }
    position = scan.nextPosition;
    onProgress();
    if (scan.caughtUp) break;
  }
  await deps.db.updateTable('transfers').set({ stray_scan_position: position }).where('id', 'in', batch.map((t) => t.id)).execute();
  return found;
}

/** Transfers with chain strays to send back whose own deposit (if any) has left the address first (their workflow sweeps it). */
async function transfersWithStraysToReturn(deps: { db: Db; chains: ChainAdapters }): Promise<string[]> {
  const candidates = await chainStrayReturnCandidates(deps.db, Object.keys(deps.chains));
  return candidates
    .filter((c) => !deps.chains[c.source_rail as ChainRail].sweepsDeposits || !c.own_deposit || c.sweep_status === 'swept')
    .map((c) => c.id);
}

/** Chain positions are block numbers (EVM) or ISO times (the simulators). */
function comparePositions(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}
