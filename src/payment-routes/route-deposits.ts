import type { ChainAdapters } from '../chains';
import type { ChainTokenTransfer } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { PaymentRouteRow, RouteDepositRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import type { ChainRail } from '../domain/rails';
import { newId } from '../ids';
import { rowsByAddress, walletAddressKey } from '../wallets/address-key';
import { routeDepositView } from './drains';

// The chain side of standing routes: the chain's one watcher (src/wallets/watcher.ts) hands each
// page of token transfers here too. Transfers into a liquidation address are found in one indexed
// query per page, whatever the number of routes, and recorded once each (`route_deposits`); they
// are confirmed as wallet transactions are, then carried (src/payment-routes/carry-deposits.ts).

type Route = Pick<PaymentRouteRow, 'id' | 'developer_id' | 'environment' | 'address'>;

/** The routes among these transfers' receivers. */
async function routesPaid(db: Db, chain: ChainRail, transfers: ChainTokenTransfer[]): Promise<Map<string, Route>> {
  const keys = [...new Set(transfers.map((t) => walletAddressKey(chain, t.to)))];
  return rowsByAddress(keys, (addresses) => db.selectFrom('payment_routes').select(['id', 'developer_id', 'environment', 'address'])
    .where('source_rail', '=', chain).where('address', 'in', addresses).execute());
}

/** Records each deposit into a liquidation address once (`liquidation_address.drain.created`); answers how many were new. */
export async function recordRouteDeposits(db: Db, chain: ChainRail, transfers: ChainTokenTransfer[]): Promise<number> {
  if (transfers.length === 0) return 0;
  const routes = await routesPaid(db, chain, transfers);
  if (routes.size === 0) return 0;
  let recorded = 0;
  for (const t of transfers) {
    const route = routes.get(walletAddressKey(chain, t.to));
    if (!route) continue;
    await db.transaction().execute(async (trx) => {
      const now = new Date();
      const row = await trx.insertInto('route_deposits').values({
        id: newId('routeDeposit', now.getTime()), route_id: route.id, developer_id: route.developer_id, environment: route.environment,
        deposit_key: `${chain}:${t.id}`, rail: chain, currency: t.currency, amount_minor: t.amountMinor.toString(), tx_hash: t.txHash,
        position: t.position, sender: t.from, provider_payment_id: null, confirmations: t.confirmations, state: t.final ? 'confirmed' : 'confirming',
        transfer_id: null, reason: null, created_at: now, updated_at: now,
      }).onConflict((oc) => oc.column('deposit_key').doNothing()).returningAll().executeTakeFirst();
      if (!row) return;
      recorded++;
      await recordEvent(trx, tenantOf(row), { ...routeDepositView(row, 'created'), objectId: row.id }, now);
    });
  }
  return recorded;
}

/** The chain's confirming route deposits, looked at again: confirmed once deep enough, dropped when their transaction left the chain. */
export async function settleRouteDeposits(db: Db, chains: ChainAdapters, chain: ChainRail): Promise<void> {
  const confirming = await db.selectFrom('route_deposits').selectAll().where('rail', '=', chain).where('state', '=', 'confirming').orderBy('id').limit(500).execute();
  for (const row of confirming) {
    const depth = await chains[chain].transferDepth({ txHash: row.tx_hash!, position: row.position! });
    if (depth && !depth.final) {
      await db.updateTable('route_deposits').set({ confirmations: depth.confirmations }).where('id', '=', row.id).where('state', '=', 'confirming').execute();
      continue;
    }
    await moveRouteDeposit(db, row, depth ? { state: 'confirmed', confirmations: depth.confirmations } : { state: 'dropped', reason: 'its transaction left the chain' });
  }
}

/** Moves a route deposit on from where it was, with its `….updated` event; nothing when another look moved it first. */
export async function moveRouteDeposit(
  db: Db, row: RouteDepositRow, change: Partial<Pick<RouteDepositRow, 'state' | 'confirmations' | 'reason' | 'transfer_id'>>,
): Promise<RouteDepositRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const now = new Date();
    const updated = await trx.updateTable('route_deposits').set({ ...change, updated_at: now })
      .where('id', '=', row.id).where('state', '=', row.state).returningAll().executeTakeFirst();
    if (!updated) return undefined;
    await recordEvent(trx, tenantOf(updated), { ...routeDepositView(updated, 'updated'), objectId: updated.id, previousAttributes: { state: row.state } }, now);
    return updated;
  });
}
