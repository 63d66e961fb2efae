import type { ChainAdapters } from '../chains';
import type { ChainTokenTransfer } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { WalletTransactionRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import type { ChainRail } from '../domain/rails';
import { rowsByAddress, walletAddressKey } from './address-key';
import { recordRouteDeposits, settleRouteDeposits } from '../payment-routes/route-deposits';
import { carryRouteDeposits } from '../payment-routes/carry-deposits';
import { newId } from '../ids';
import { transfersOfTransactions } from '../payments/store';
import { transfersOfWalletTransactions } from '../payments/wallet-signed-transactions';
import { serializeWalletTransaction } from './transactions';

// One watcher per chain (workflows/wallet-watcher.ts) follows every token transfer of the chain and
// matches both ends against all wallet addresses at once, in the database: what it costs follows
// the chain's traffic, not the number of wallets. Each transfer into or out of a wallet becomes a
// wallet transaction, pending until deep enough; both steps are events.

// Deposits into liquidation addresses are found on the same pages (src/payment-routes/); with
// `routes`, the look also carries the confirmed ones to their transfers.
type WatchDeps = { db: Db; chains: ChainAdapters; routes?: Parameters<typeof carryRouteDeposits>[0] };

/** Reads per look before the pending transactions are looked at again. */
const READS_PER_LOOK = 20;


/**
 * One look at the chain: reads on from the chain's cursor until caught up, records what touched a
 * wallet, then brings its pending transactions up to date. `onProgress` after each read (heartbeat).
 */
export async function followWalletTransfers(deps: WatchDeps, chain: ChainRail, onProgress: () => void): Promise<{ recorded: number; settled: number }> {
  const cursor = await deps.db.selectFrom('chain_watch_cursors').select('position').where('chain', '=', chain).executeTakeFirst();
  if (!cursor) return { recorded: 0, settled: 0 }; // no wallet on this chain yet
  let position = cursor.position;
  let recorded = 0;
  for (let reads = 0; reads < READS_PER_LOOK; reads++) {
    const page = await deps.chains[chain].readTokenTransfers(position);
    recorded += await recordWalletTransfers(deps.db, chain, page.transfers);
    recorded += await recordRouteDeposits(deps.db, chain, page.transfers);
    // After the records: a crash in between reads the range again, and records nothing twice.
    position = page.nextPosition;
    await deps.db.updateTable('chain_watch_cursors').set({ position, updated_at: new Date() }).where('chain', '=', chain).execute();
    onProgress();
    if (page.caughtUp) break;
  }
  const settled = await settlePendingTransactions(deps, chain);
  await settleRouteDeposits(deps.db, deps.chains, chain);
  if (deps.routes) await carryRouteDeposits(deps.routes, chain);
  return { recorded, settled };
}

interface WalletLeg {
  transfer: ChainTokenTransfer;
  wallet: { id: string; developer_id: string; environment: WalletTransactionRow['environment'] };
  direction: 'incoming' | 'outgoing';
}

/** The legs of these transfers that are a wallet's: the receiving wallet's incoming, the sending wallet's outgoing. */
async function walletLegs(db: Db, chain: ChainRail, transfers: ChainTokenTransfer[]): Promise<WalletLeg[]> {
  const keys = [...new Set(transfers.flatMap((t) => [walletAddressKey(chain, t.from), walletAddressKey(chain, t.to)]))];
  const wallets: Map<string, WalletLeg['wallet']> = await rowsByAddress(keys, (addresses) => db.selectFrom('wallet_addresses')
    .innerJoin('wallets', 'wallets.id', 'wallet_addresses.wallet_id')
    .select(['wallet_addresses.address', 'wallets.id', 'wallets.developer_id', 'wallets.environment'])
    .where('wallet_addresses.chain', '=', chain).where('wallet_addresses.address', 'in', addresses).execute());
  if (wallets.size === 0) return [];
  return transfers.flatMap((transfer) => {
    const to = wallets.get(walletAddressKey(chain, transfer.to));
    const from = wallets.get(walletAddressKey(chain, transfer.from));
    return [
      ...(to ? [{ transfer, wallet: to, direction: 'incoming' as const }] : []),
      ...(from ? [{ transfer, wallet: from, direction: 'outgoing' as const }] : []),
    ];
  });
}

/** Records each wallet leg once (`wallet.transaction.created`); answers how many were new. */
async function recordWalletTransfers(db: Db, chain: ChainRail, transfers: ChainTokenTransfer[]): Promise<number> {
  if (transfers.length === 0) return 0;
  const legs = await walletLegs(db, chain, transfers);
  if (legs.length === 0) return 0;
  const hashes = [...new Set(legs.map((l) => l.transfer.txHash))];
  // A transfer's leg: a payment of the platform's, or a wallet's own signed send (known before its deposit is).
  const transferIds = new Map([...await transfersOfTransactions(db, chain, hashes), ...await transfersOfWalletTransactions(db, chain, hashes)]);
  let recorded = 0;
  for (const { transfer: t, wallet, direction } of legs) {
    await db.transaction().execute(async (trx) => {
      const now = new Date();
      const row = await trx.insertInto('wallet_transactions').values({
        id: newId('walletTransaction', now.getTime()), developer_id: wallet.developer_id, environment: wallet.environment, wallet_id: wallet.id,
        chain, currency: t.currency, direction, amount_minor: t.amountMinor.toString(), tx_hash: t.txHash, transfer_ref: t.id,
        counterparty: direction === 'incoming' ? t.from : t.to, position: t.position, confirmations: t.confirmations,
        state: t.final ? 'confirmed' : 'pending', transfer_id: transferIds.get(t.txHash) ?? null, created_at: now, updated_at: now,
      }).onConflict((oc) => oc.columns(['chain', 'transfer_ref', 'wallet_id', 'direction']).doNothing()).returningAll().executeTakeFirst();
      if (!row) return;
      recorded++;
      await recordEvent(trx, tenantOf(row), { type: 'wallet.transaction.created', objectId: row.id, data: serializeWalletTransaction(row) }, now);
    });
  }
  return recorded;
}

/**
 * The chain's pending wallet transactions, looked at again: confirmed once deep enough, dropped when
 * their transaction left the chain, each with `wallet.transaction.updated`; else their depth is noted.
 */
async function settlePendingTransactions(deps: WatchDeps, chain: ChainRail): Promise<number> {
  const pending = await deps.db.selectFrom('wallet_transactions').selectAll().where('chain', '=', chain).where('state', '=', 'pending')
    .orderBy('id').limit(500).execute();
  const depths = new Map<string, Awaited<ReturnType<ChainAdapters[ChainRail]['transferDepth']>>>();
  let settled = 0;
  for (const row of pending) {
    const key = `${row.tx_hash}|${row.position}`;
    if (!depths.has(key)) depths.set(key, await deps.chains[chain].transferDepth({ txHash: row.tx_hash, position: row.position }));
    const depth = depths.get(key)!;
    const state = depth === null ? 'dropped' : depth.final ? 'confirmed' : 'pending';
    const confirmations = depth?.confirmations ?? 0;
    if (state === 'pending') {
      await deps.db.updateTable('wallet_transactions').set({ confirmations }).where('id', '=', row.id).where('state', '=', 'pending').execute();
      continue;
    }
    await deps.db.transaction().execute(async (trx) => {
      const now = new Date();
      const updated = await trx.updateTable('wallet_transactions').set({ state, confirmations, updated_at: now })
        .where('id', '=', row.id).where('state', '=', 'pending').returningAll().executeTakeFirst();
      if (!updated) return; // settled by another look meanwhile
      settled++;
      await recordEvent(trx, tenantOf(updated), {
        type: 'wallet.transaction.updated', objectId: updated.id, data: serializeWalletTransaction(updated),
        previousAttributes: { state: row.state, confirmations: row.confirmations },
      }, now);
    });
  }
  return settled;
}
