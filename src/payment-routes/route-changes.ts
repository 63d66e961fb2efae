import type { PaymentRail } from '../domain/rails';
import type { Kysely, Transaction } from 'kysely';
import type { z } from 'zod';
import type { PlatformDeps } from '../deps';
import type { Database, PaymentRouteRow, RouteDestination } from '../db/schema';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { changedAttributes, recordEvent } from '../domain/events';
import { invalidStateField, notFound } from '../errors';
import { limitColumns, type RouteLimits } from './limits';
import { checkRouteOutside, checkRouteParties } from './route-checks';

// Reading and changing a standing route of either kind (liquidation address, virtual account): one
// row in `payment_routes`, found within the key's tenant, changed under a row lock, announced as
// `{kind}.updated` with the attributes it had before.

type Executor = Kysely<Database> | Transaction<Database>;
export type RouteKind = PaymentRouteRow['kind'];

const NAMES: Record<RouteKind, string> = { liquidation_address: 'liquidation address', virtual_account: 'virtual account' };

/** The tenant's route of this kind; a 404 for another kind, or (with `customerId`) another customer's. */
export async function findPaymentRoute(db: Executor, tenant: Tenant, kind: RouteKind, id: string, opts: { customerId?: string; forUpdate?: boolean } = {}) {
  const row = await findTenantRow(db, 'payment_routes', tenant, id, { what: NAMES[kind], forUpdate: opts.forUpdate });
  if (row.kind !== kind || (opts.customerId !== undefined && row.customer_id !== opts.customerId)) throw notFound(NAMES[kind], id);
  return row;
}

/** What a PATCH, a deactivation or a reactivation changes; what it leaves out stays. */
export interface RouteChange {
  destination?: RouteDestination;
  developer_fee_percent?: string;
  return_address?: string | null;
  limits?: z.output<typeof RouteLimits>;
  status?: PaymentRouteRow['status'];
}

const applied = (before: PaymentRouteRow, change: RouteChange): PaymentRouteRow => ({
  ...before,
  destination: change.destination ?? before.destination,
  developer_fee_percent: change.developer_fee_percent ?? before.developer_fee_percent,
  return_address: change.return_address === undefined ? before.return_address : change.return_address,
  status: change.status ?? before.status,
});

const movesMoney = (change: RouteChange) => Boolean(change.destination || change.developer_fee_percent);

/**
 * Before the change's transaction: a new destination or fee is checked as at creation (the rails
 * served, the chain legs), so that no chain is asked anything while the route's row is locked.
 */
export async function prepareRouteChange(deps: PlatformDeps, tenant: Tenant, kind: RouteKind, customerId: string, id: string, change: RouteChange) {
  if (!movesMoney(change)) return;
  await checkRouteOutside(deps, tenant, applied(await findPaymentRoute(deps.db, tenant, kind, id, { customerId }), change));
}

/**
 * The change on the locked row: the customer and the destination's account or wallet checked again
 * for a new destination or fee (`check` adds the kind's own checks), stored, and announced.
 */
export async function changePaymentRoute(
  deps: PlatformDeps, trx: Transaction<Database>, tenant: Tenant, route: { kind: RouteKind; customerId: string; id: string },
  change: RouteChange, serialize: (row: PaymentRouteRow) => Record<string, unknown>, check?: (after: PaymentRouteRow) => void,
): Promise<PaymentRouteRow> {
  const before = await findPaymentRoute(trx, tenant, route.kind, route.id, { customerId: route.customerId, forUpdate: true });
  if (change.status && change.status === before.status) {
    const name = NAMES[route.kind];
    throw invalidStateField('status', `${name[0]!.toUpperCase()}${name.slice(1)} ${route.id} is ${before.status} already`);
  }
  const after = applied(before, change);
  check?.(after);
  if (movesMoney(change)) await checkRouteParties(deps, trx, tenant, after);
  const now = new Date();
  const row = await trx.updateTable('payment_routes').set({
    destination: JSON.stringify(after.destination), developer_fee_percent: after.developer_fee_percent, return_address: after.return_address, status: after.status,
    ...limitColumns(before.source_currency, before.source_rail as PaymentRail, change.limits, before), updated_at: now,
  }).where('id', '=', route.id).returningAll().executeTakeFirstOrThrow();
  const data = serialize(row);
  await recordEvent(trx, tenant, {
    type: `${route.kind}.updated`, objectId: route.id, data, previousAttributes: changedAttributes(serialize(before), data),
  }, now);
  return row;
}
