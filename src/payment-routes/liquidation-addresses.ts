import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { PlatformDeps } from '../deps';
import { findCustomer } from '../customers/customer';
import type { Database, PaymentRouteRow } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import { burnAddressError, cryptoAddressError } from '../domain/bank-validation';
import { recordEvent } from '../domain/events';
import { CHAIN_RAILS, RAILS, type ChainRail, type CryptoChain } from '../domain/rails';
import { invalidField } from '../errors';
import { newId, objectId } from '../ids';
import { currencyCode, TransferCreate } from '../transfers/service';
import { checkRouteOutside, checkRouteParties } from './route-checks';
import { changePaymentRoute } from './route-changes';
import { walletAddressKey } from '../wallets/address-key';
import { DeveloperFeePercent, percentString } from './fees';
import { limitColumns, RouteLimits, RouteLimitsSchema, serializeLimits } from './limits';

// Liquidation addresses (docs/ROUTES.md): a customer's permanent address on a chain; every deposit to
// it becomes a transfer to the route's destination (src/payment-routes/route-deposits.ts). A route is
// a row: the chain's one watcher finds its deposits, as it finds wallets'.

export const LiquidationAddressCreate = z.strictObject({
  // Deposit addresses are the platform's: swept into the treasury (EVM, solana) or spent from where
  // they landed (bitcoin); stellar and tron are the sandbox's simulator (503 in live).
  chain: z.enum(CHAIN_RAILS),
  currency: currencyCode,
  destination: TransferCreate.shape.destination,
  return_address: z.string().trim().min(1).optional().describe('Where deposits go back on this chain once the address is deactivated'),
  developer_fee_percent: DeveloperFeePercent.optional(),
  limits: RouteLimits.optional(),
});

export const LiquidationAddressUpdate = z.strictObject({
  destination: TransferCreate.shape.destination.optional(),
  developer_fee_percent: DeveloperFeePercent.optional(),
  return_address: z.string().trim().min(1).nullable().optional(),
  limits: RouteLimits.optional(),
});

export const LiquidationAddressSchema = z.object({
  id: objectId('liq'),
  object: z.literal('liquidation_address'),
  customer_id: z.string(),
  chain: z.string(),
  currency: z.string(),
  address: z.string().describe('The permanent deposit address on the chain'),
  destination: z.record(z.string(), z.string()).describe("Where each deposit goes: a transfer's destination leg"),
  developer_fee_percent: z.string().describe('Decimal percent of each deposit kept as developer_fee'),
  limits: RouteLimitsSchema.describe('Deposits above a limit are held in review'),
  return_address: z.string().nullable(),
  status: z.enum(['active', 'deactivated']),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'LiquidationAddress' });

export function serializeLiquidationAddress(row: PaymentRouteRow) {
  return {
    id: row.id, object: 'liquidation_address' as const, customer_id: row.customer_id, chain: row.source_rail, currency: row.source_currency,
    address: row.display_address!, destination: { ...row.destination } as Record<string, string>,
    developer_fee_percent: percentString(row.developer_fee_percent), limits: serializeLimits(row),
    return_address: row.return_address, status: row.status, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}


function checkReturnAddress(chain: ChainRail, address: string | null | undefined) {
  if (!address) return;
  // A refund address that burns money or that no key holds (a Solana program-derived address) is refused, as for transfers' refunds.
  const error = cryptoAddressError(chain as CryptoChain, address) ?? burnAddressError(chain as CryptoChain, address);
  if (error) throw invalidField('body', 'return_address', error);
}

const draftOf = (customerId: string, body: z.output<typeof LiquidationAddressCreate>) => ({
  customer_id: customerId, source_rail: body.chain, source_currency: body.currency, developer_fee_percent: body.developer_fee_percent ?? '0', destination: body.destination,
});

/** What is checked before the database transaction opens; answers the chain's position, where its watcher may start. */
export async function prepareLiquidationAddress(deps: PlatformDeps, tenant: Tenant, customerId: string, body: z.output<typeof LiquidationAddressCreate>) {
  await findCustomer(deps.db, tenant, customerId);
  // Named as this body names it (the route's checks would name a transfer's `source.currency`).
  if (!RAILS[body.chain].currencies.includes(body.currency)) throw invalidField('body', 'currency', `${body.chain} carries ${RAILS[body.chain].currencies.join(', ')}, not ${body.currency}`);
  checkReturnAddress(body.chain, body.return_address);
  await checkRouteOutside(deps, tenant, draftOf(customerId, body));
  return deps.chains[body.chain].currentPosition();
}

/** A new permanent address of the chain (the deposit addresses' HD sequence, so the platform sweeps it); announced as `liquidation_address.created`. */
export async function createLiquidationAddress(
  trx: Transaction<Database>, deps: PlatformDeps, tenant: Tenant, customerId: string, body: z.output<typeof LiquidationAddressCreate>, position: string,
) {
  const draft = draftOf(customerId, body);
  await checkRouteParties(deps, trx, tenant, draft);
  const { index } = (await sql<{ index: string }>`select nextval('deposit_address_index')::text as index`.execute(trx)).rows[0]!;
  const address = deps.chains[body.chain].depositAddress(Number(index));
  const now = new Date();
  const row = await trx.insertInto('payment_routes').values({
    id: newId('liquidationAddress', now.getTime()), developer_id: tenant.developerId, environment: tenant.environment, customer_id: customerId,
    kind: 'liquidation_address', status: 'active', source_rail: body.chain, source_currency: body.currency,
    address: walletAddressKey(body.chain, address), display_address: address, deposit_index: index, deposit_reference: null,
    destination: JSON.stringify(body.destination), developer_fee_percent: draft.developer_fee_percent, return_address: body.return_address ?? null,
    ...limitColumns(body.currency, body.chain, body.limits), created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  // The chain's watcher reads from before the address existed (an earlier cursor stays: it is behind).
  await trx.insertInto('chain_watch_cursors').values({ chain: body.chain, position, updated_at: now }).onConflict((oc) => oc.column('chain').doNothing()).execute();
  await recordEvent(trx, tenant, { type: 'liquidation_address.created', objectId: row.id, data: serializeLiquidationAddress(row) }, now);
  return row;
}

/** A new destination, fee, limits or return address (checked as at creation), or a new status; announced as `liquidation_address.updated`. */
export function updateLiquidationAddress(
  deps: PlatformDeps, trx: Transaction<Database>, tenant: Tenant, customerId: string, id: string,
  change: z.output<typeof LiquidationAddressUpdate> & { status?: PaymentRouteRow['status'] },
) {
  return changePaymentRoute(deps, trx, tenant, { kind: 'liquidation_address', customerId, id }, change, serializeLiquidationAddress,
    (after) => checkReturnAddress(after.source_rail as ChainRail, after.return_address));
}
