import type { Transaction } from 'kysely';
import type { PlatformDeps } from '../deps';
import type { Database, PaymentRouteRow, RouteDestination } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { railBoundsMinor, type PaymentRail } from '../domain/rails';
import { checkProvidersServe, checkTransferShape, prepareChainLegs, resolveTransferParties, type TransferCreateInput } from '../transfers/service';
import { developerFeeMinor } from './fees';

// What every standing route shares (liquidation addresses, virtual accounts): the transfer one of its
// deposits becomes, and the checks a route passes at creation so that its deposits can pass them too.

export type RouteDraft = Pick<PaymentRouteRow, 'customer_id' | 'source_rail' | 'source_currency' | 'developer_fee_percent'> & { destination: RouteDestination };

/** The transfer a deposit of `amountMinor` on the route is: what creation checks, and what each deposit creates. */
export function routeTransferInput(route: RouteDraft, deposit: { amountMinor: bigint; sender?: string; rail?: PaymentRail }): TransferCreateInput {
  const scale = ASSET_SCALE[route.source_currency] ?? 2;
  return {
    amount: formatAmount(deposit.amountMinor, scale),
    on_behalf_of: route.customer_id,
    developer_fee: formatAmount(developerFeeMinor(deposit.amountMinor, route.developer_fee_percent), scale),
    source: {
      payment_rail: (deposit.rail ?? route.source_rail) as PaymentRail, currency: route.source_currency, ...(deposit.sender ? { from_address: deposit.sender } : {}),
    },
    destination: route.destination as TransferCreateInput['destination'],
  };
}

/**
 * Before the route's transaction: the rails served (503 in live without a real implementation), the
 * shape of a transfer of the source rail's smallest amount, and its chain legs.
 */
export async function checkRouteOutside(deps: PlatformDeps, tenant: Tenant, route: RouteDraft) {
  const input = smallestDeposit(route);
  checkProvidersServe(deps, tenant, input);
  checkTransferShape(input, { senderLater: true });
  await prepareChainLegs(deps, tenant, input);
}

/** In the route's transaction: the customer (active, KYC, endorsements), the destination's account or wallet. */
export async function checkRouteParties(deps: PlatformDeps, trx: Transaction<Database>, tenant: Tenant, route: RouteDraft) {
  const input = smallestDeposit(route);
  const shape = checkTransferShape(input, { senderLater: true });
  await resolveTransferParties(trx, deps, tenant, input, shape.amountMinor);
}

const smallestDeposit = (route: RouteDraft) => routeTransferInput(route, { amountMinor: railBoundsMinor(route.source_rail as PaymentRail, route.source_currency).min });
