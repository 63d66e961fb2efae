import type { PlatformDeps } from '../deps';
import type { PaymentRouteRow, RouteDepositRow, TransferRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { isChainRail, type ChainRail, type PaymentRail } from '../domain/rails';
import { ApiError } from '../errors';
import { loadTransfer } from '../transfers/transfer';
import { createTransfer } from '../transfers/prepare';
import { checkProvidersServe, checkTransferShape, prepareChainLegs } from '../transfers/service';
import { startTransferWorkflow } from '../transfers/workflow-client';
import type { DepositNotice } from '../../workflows/transfer-messages';
import { routeTransferInput } from './route-checks';
import { moveRouteDeposit } from './route-deposits';
import { virtualAccountInstructions } from './virtual-accounts';

// A received route deposit (a chain's: once confirmed) becomes a transfer to the route's destination,
// created as POST /v0/transfers creates one (same checks, quote and fee), showing where the money
// was sent, and its workflow starts with the deposit already in (workflows/transfer.ts). The deposit
// row keys it: a crash anywhere, or a second look, creates one transfer and starts one workflow
// (`transfer:{id}`, an existing one is used). A deactivated route's deposit goes back the same way:
// its transfer takes it and refunds it to the sender (a liquidation address: to its return address).

export type CarryDeps = Pick<PlatformDeps, 'db' | 'chains' | 'rates' | 'availability' | 'config' | 'temporal' | 'log'>;

/** Carries the chain's confirmed route deposits (a bounded batch per look); answers how many have their transfer now. */
export async function carryRouteDeposits(deps: CarryDeps, chain: ChainRail): Promise<number> {
  const confirmed = await deps.db.selectFrom('route_deposits').selectAll().where('rail', '=', chain).where('state', '=', 'confirmed').orderBy('id').limit(100).execute();
  let carried = 0;
  for (const deposit of confirmed) {
    try {
      if ((await carryRouteDeposit(deps, deposit)).transferId) carried++;
    } catch (err) {
      // One deposit the platform cannot carry now (a node or rate source down) does not stop the
      // watcher: it stays confirmed and the next look tries again.
      deps.log.warn({ route_deposit_id: deposit.id, err: String((err as Error).message) }, 'route deposit not carried yet');
    }
  }
  return carried;
}

/** What the route does with a deposit: carry it, send it back (`refusal`, to `sender`), or hold it for operators. */
type Decision = { carry: true; refusal?: string; sender?: string } | { carry: false; hold: string };

function decide(route: PaymentRouteRow, deposit: RouteDepositRow): Decision {
  const what = route.kind === 'virtual_account' ? 'virtual account' : 'liquidation address';
  if (route.source_currency !== deposit.currency) return { carry: false, hold: `currency_not_routed: the ${what} forwards ${route.source_currency}, not ${deposit.currency}` };
  if (route.status === 'active') return { carry: true };
  const stopped = `route_deactivated: the ${what} no longer forwards deposits`;
  // A fiat payment goes back through its rail; a chain deposit only to an address the customer named.
  if (!isChainRail(route.source_rail)) return { carry: true, refusal: `${stopped}; returned to the sender` };
  if (route.return_address) return { carry: true, refusal: `${stopped}; returned to its return address`, sender: route.return_address };
  return { carry: false, hold: stopped };
}

/** Carries one received deposit, once: answers its transfer, or that it is held (and why). */
export async function carryRouteDeposit(deps: CarryDeps, deposit: RouteDepositRow): Promise<{ transferId?: string; held?: string }> {
  if (deposit.state === 'held') return { held: deposit.reason ?? 'held' };
  const route = await deps.db.selectFrom('payment_routes').selectAll().where('id', '=', deposit.route_id).executeTakeFirstOrThrow();
  const created = deposit.transfer_id
    ? { transfer: (await loadTransfer(deps.db, deposit.transfer_id))!, refusal: deposit.reason ?? undefined }
    : await createRouteTransfer(deps, route, deposit);
  if ('held' in created) return created;
  const { transfer, refusal } = created;
  const notice: DepositNotice = deposit.provider_payment_id ? { railPaymentId: deposit.provider_payment_id } : { txHash: deposit.tx_hash!, from: deposit.sender! };
  await startTransferWorkflow(deps, tenantOf(route), transfer, { routeDeposit: notice, ...(refusal ? { routeDepositRefused: refusal } : {}) });
  // From confirmed only: a deposit carried before keeps its one event.
  await moveRouteDeposit(deps.db, { ...deposit, state: 'confirmed' }, { state: 'transferred', transfer_id: transfer.id });
  return { transferId: transfer.id };
}

type Created = { transfer: TransferRow; refusal?: string } | { held: string };

/** The deposit's transfer, created once; a deposit the route does not carry, or whose transfer is refused, is held for operators. */
async function createRouteTransfer(deps: CarryDeps, route: PaymentRouteRow, deposit: RouteDepositRow): Promise<Created> {
  const tenant = tenantOf(route);
  const hold = async (reason: string): Promise<Created> => {
    await moveRouteDeposit(deps.db, deposit, { state: 'held', reason });
    return { held: reason };
  };
  const decision = decide(route, deposit);
  if (!decision.carry) return hold(decision.hold);
  const input = routeTransferInput(route, {
    amountMinor: BigInt(deposit.amount_minor), sender: decision.sender ?? deposit.sender ?? undefined, rail: deposit.rail as PaymentRail,
  });
  try {
    checkProvidersServe(deps, tenant, input);
    const prepared = { ...checkTransferShape(input), ...await prepareChainLegs(deps as PlatformDeps, tenant, input) };
    return await deps.db.transaction().execute(async (trx): Promise<Created> => {
      const locked = await trx.selectFrom('route_deposits').selectAll().where('id', '=', deposit.id).forUpdate().executeTakeFirstOrThrow();
      // Another look created it meanwhile, or held it.
      if (locked.transfer_id) return { transfer: (await loadTransfer(trx, locked.transfer_id))!, refusal: locked.reason ?? undefined };
      if (locked.state !== 'confirmed') return { held: locked.reason ?? locked.state };
      const row = await createTransfer(trx, deps as PlatformDeps, tenant, input, prepared, {
        routeId: route.id, depositAddress: route.kind === 'liquidation_address' ? route.display_address : null, depositIndex: route.deposit_index,
        ...(route.kind === 'virtual_account' ? { instructions: virtualAccountInstructions(deps.config, route) } : {}),
      });
      await trx.updateTable('route_deposits').set({ transfer_id: row.id, reason: decision.refusal ?? null, updated_at: new Date() }).where('id', '=', deposit.id).execute();
      return { transfer: row, refusal: decision.refusal };
    });
  } catch (err) {
    // Refused as POST /v0/transfers would refuse it: held. Unavailable for now: tried again next look.
    if (err instanceof ApiError && err.code !== 'service_unavailable') return hold(`transfer_refused: ${err.message}`);
    throw err;
  }
}
