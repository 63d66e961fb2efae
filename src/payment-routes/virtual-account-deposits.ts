import type { PaymentRouteRow, RouteDepositRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import type { FiatRail } from '../domain/rails';
import { newId } from '../ids';
import { carryRouteDeposit, type CarryDeps } from './carry-deposits';
import { routeDepositView } from './drains';

// The fiat side of standing routes: a payment the rail's provider reports (webhook, bank file, the
// sandbox) that names a virtual account's reference is recorded once as the account's deposit
// (`route_deposits`, keyed by the provider's payment id) and carried at once: its transfer is
// created and started with the payment as its deposit (src/payment-routes/carry-deposits.ts).

/** The account a payment named, as the rail-event intake found it. */
export type VirtualAccountOf = Pick<PaymentRouteRow, 'id' | 'developer_id' | 'environment'>;

export interface VirtualAccountPayment {
  providerPaymentId: string;
  rail: FiatRail;
  currency: string;
  amountMinor: bigint;
}

/** Records the payment as the account's deposit (once) and carries it: answers its transfer, or why it is held. */
export async function receiveVirtualAccountDeposit(
  deps: CarryDeps, route: VirtualAccountOf, payment: VirtualAccountPayment,
): Promise<{ transferId?: string; held?: string }> {
  return carryRouteDeposit(deps, await recordVirtualAccountDeposit(deps, route, payment));
}

async function recordVirtualAccountDeposit(deps: CarryDeps, route: VirtualAccountOf, payment: VirtualAccountPayment): Promise<RouteDepositRow> {
  const key = `${payment.rail}:${payment.providerPaymentId}`;
  return deps.db.transaction().execute(async (trx) => {
    const now = new Date();
    const row = await trx.insertInto('route_deposits').values({
      id: newId('virtualAccountDeposit', now.getTime()), route_id: route.id, developer_id: route.developer_id, environment: route.environment,
      deposit_key: key, rail: payment.rail, currency: payment.currency, amount_minor: payment.amountMinor.toString(), tx_hash: null, position: null,
      sender: null, provider_payment_id: payment.providerPaymentId, confirmations: 0, state: 'confirmed', transfer_id: null, reason: null,
      created_at: now, updated_at: now,
    }).onConflict((oc) => oc.column('deposit_key').doNothing()).returningAll().executeTakeFirst();
    if (!row) return trx.selectFrom('route_deposits').selectAll().where('deposit_key', '=', key).executeTakeFirstOrThrow();
    await recordEvent(trx, tenantOf(row), { ...routeDepositView(row, 'created'), objectId: row.id }, now);
    return row;
  });
}
