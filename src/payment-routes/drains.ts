import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { Database, RouteDepositRow } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import type { EventType } from '../domain/event-catalogue';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { isChainRail } from '../domain/rails';
import { objectId } from '../ids';

// One deposit a route received, and what became of it (its transfer's state, or why it was held): a
// liquidation address's drain (`…/liquidation_addresses/{id}/drains`) or a virtual account's deposit
// (`/v0/virtual_accounts/{id}/history`). Liquidation addresses are on chains, virtual accounts on
// fiat rails: the deposit's rail says which.

type Executor = Kysely<Database> | Transaction<Database>;

export const DrainSchema = z.object({
  id: objectId('drn'),
  object: z.literal('liquidation_address_drain'),
  liquidation_address_id: z.string(),
  chain: z.string(),
  currency: z.string(),
  amount: z.string().describe('Decimal: what arrived'),
  from_address: z.string().nullable(),
  tx_hash: z.string().nullable(),
  confirmations: z.number().int(),
  state: z.enum(['confirming', 'confirmed', 'transferred', 'dropped', 'held']).describe('confirming until deep enough; transferred once its transfer runs; held for operators (reason)'),
  reason: z.string().nullable(),
  transfer_id: z.string().nullable(),
  transfer_state: z.string().nullable().describe("The transfer's state, where it has one"),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'LiquidationAddressDrain' });

export function serializeDrain(row: RouteDepositRow, transferState: string | null) {
  return {
    id: row.id, object: 'liquidation_address_drain' as const, liquidation_address_id: row.route_id, chain: row.rail, currency: row.currency,
    amount: formatAmount(BigInt(row.amount_minor), ASSET_SCALE[row.currency] ?? 2), from_address: row.sender, tx_hash: row.tx_hash,
    confirmations: row.confirmations, state: row.state, reason: row.reason, transfer_id: row.transfer_id, transfer_state: transferState,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

export const VirtualAccountDepositSchema = z.object({
  id: objectId('vad'),
  object: z.literal('virtual_account_deposit'),
  virtual_account_id: z.string(),
  payment_rail: z.string(),
  currency: z.string(),
  amount: z.string().describe('Decimal: what arrived'),
  state: z.enum(['confirmed', 'transferred', 'held']).describe('transferred once its transfer runs (reason set when that transfer returns it); held for operators (reason)'),
  reason: z.string().nullable(),
  transfer_id: z.string().nullable(),
  transfer_state: z.string().nullable().describe("The transfer's state, where it has one"),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'VirtualAccountDeposit' });

export function serializeVirtualAccountDeposit(row: RouteDepositRow, transferState: string | null) {
  return {
    id: row.id, object: 'virtual_account_deposit' as const, virtual_account_id: row.route_id, payment_rail: row.rail, currency: row.currency,
    amount: formatAmount(BigInt(row.amount_minor), ASSET_SCALE[row.currency] ?? 2), state: row.state, reason: row.reason,
    transfer_id: row.transfer_id, transfer_state: transferState, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** A route deposit as its route's kind shows it, and the name of its events. */
export function routeDepositView(row: RouteDepositRow, change: 'created' | 'updated'): { type: EventType; data: Record<string, unknown> } {
  return isChainRail(row.rail)
    ? { type: `liquidation_address.drain.${change}`, data: serializeDrain(row, null) }
    : { type: `virtual_account.deposit.${change}`, data: serializeVirtualAccountDeposit(row, null) };
}

/** The route's deposits with their transfers' states, for keyset pagination. */
export function routeDrains(db: Executor, tenant: Tenant, routeId: string) {
  const rows = db.selectFrom('route_deposits as d').leftJoin('transfers as t', 't.id', 'd.transfer_id')
    .where('d.developer_id', '=', tenant.developerId).where('d.environment', '=', tenant.environment).where('d.route_id', '=', routeId)
    .selectAll('d').select('t.state as transfer_state');
  return db.selectFrom(rows.as('x')).selectAll();
}
