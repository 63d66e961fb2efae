import type { Db } from '../db';
import { sentPaymentByProviderId } from '../payments/store';
import type { RailEventsTable } from '../db/schema';
import type { Selectable } from 'kysely';
import type { AppDeps } from '../api/context';
import { ASSET_SCALE, parseAmount } from '../domain/money';
import type { FiatRail } from '../domain/rails';
import {
  DEPOSIT_TRANSFER_COLUMNS, depositForTransfer, HANDLED_RAIL_EVENT_OUTCOMES, lateReturn, releaseUnclaimedMoney, unmatchedDepositOf,
  type RailEventOutcome, type ReceivedPayment, type UnclaimedMoney,
} from '../transfers/rail-events';

/**
 * The provider's events that need an operator (docs/TRANSFERS.md, *The provider's webhook*): money
 * that funded nothing, returns that reached no workflow, and deliveries never handled; oldest first.
 */
export function railEventsNeedingOperators(db: Db): Promise<Selectable<RailEventsTable>[]> {
  return db.selectFrom('rail_events').selectAll()
    .where('resolved_at', 'is', null)
    .where((eb) => eb.or([eb('outcome', 'is', null), eb('outcome', 'not in', [...HANDLED_RAIL_EVENT_OUTCOMES])]))
    .orderBy('received_at').limit(1000).execute();
}

/** An operator dealt with one (sent the money back through the provider, say): recorded with who and how. */
export async function resolveRailEvent(db: Db, input: { id: string; operator: string; note: string }) {
  const event = await db.selectFrom('rail_events').select(['outcome', 'resolved_at', 'transfer_id']).where('id', '=', input.id).executeTakeFirst();
  if (!event) throw new Error(`No such rail event: ${input.id}`);
  if (event.outcome && HANDLED_RAIL_EVENT_OUTCOMES.includes(event.outcome as RailEventOutcome)) throw new Error(`${input.id} was handled (${event.outcome}); nothing to resolve`);
  if (event.resolved_at) throw new Error(`${input.id} was resolved already`);
  // A match cut off half-way may have offered the money to its transfer already: finish it instead.
  if (event.outcome === 'unmatched' && event.transfer_id) {
    throw new Error(`${input.id} is being matched to ${event.transfer_id}: run \`rail-events match ${input.id} --transfer ${event.transfer_id}\` again to finish`);
  }
  const money = await unclaimedMoneyOf(db, input.id);
  await db.transaction().execute(async (trx) => {
    // Not while a match claims it (the match lets the money go instead).
    const resolved = await trx.updateTable('rail_events').set({ resolved_by: input.operator, resolved_note: input.note, resolved_at: new Date() })
      .where('id', '=', input.id).where('resolved_at', 'is', null)
      .where((eb) => (event.outcome === 'unmatched' ? eb('transfer_id', 'is', null) : eb.lit(true)))
      .returning('id').executeTakeFirst();
    if (!resolved) throw new Error(`${input.id} changed meanwhile (resolved or being matched): look at it again`);
    // The operators sent the money on themselves (back through the provider, say): it leaves the ledger.
    if (money) await releaseUnclaimedMoney(trx, money, `${money.description}: resolved by ${input.operator} (${input.note})`);
  });
}

/** The money an event left with the platform for operators, as the ledger holds it: null for one that moved none. */
async function unclaimedMoneyOf(db: Db, id: string): Promise<(UnclaimedMoney & { description: string }) | null> {
  const event = await db.selectFrom('rail_events').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (event.outcome === 'unmatched') return { ...await unmatchedDepositOf(db, receivedPayment(event)), description: 'money that named no transfer' };
  if (event.outcome !== 'return_window_closed') return null;
  const payment = await sentPaymentByProviderId(db, event.provider_payment_id, ['payout', 'refund']);
  if (!payment) throw new Error(`${id}: no payout or refund ${event.provider_payment_id}`);
  return { ...lateReturn(payment), description: `${payment.kind} returned after its return window` };
}

/** The payment a `payment.received` event reported, as the webhook read it. */
function receivedPayment(event: Selectable<RailEventsTable>): ReceivedPayment {
  const payload = event.payload as { rail: FiatRail; currency: string; amount: string; reference: string };
  return {
    id: event.id, type: 'payment.received', providerPaymentId: event.provider_payment_id, rail: payload.rail, currency: payload.currency,
    amountMinor: parseAmount(payload.amount, ASSET_SCALE[payload.currency] ?? 2)!, reference: payload.reference,
  };
}

/**
 * An operator found the transfer an unmatched deposit was meant for (its sender left out or mistyped
 * the reference): the money is offered to that transfer as if it had named it, so the transfer takes
 * it if it is exactly what it quoted and still waits, and otherwise it goes back to its sender through
 * the stray-deposit return (ledger, screening, `payments held`). The event is first claimed for that
 * transfer, so it funds one transfer at most; a match cut off half-way is finished by running it again.
 */
export async function matchUnmatchedDeposit(
  deps: Pick<AppDeps, 'db' | 'temporal' | 'config'>,
  input: { id: string; transferId: string; operator: string; note?: string },
): Promise<RailEventOutcome> {
  const { db } = deps;
  const event = await db.selectFrom('rail_events').selectAll().where('id', '=', input.id).executeTakeFirst();
  if (!event) throw new Error(`No such rail event: ${input.id}`);
  if (event.type !== 'payment.received' || event.outcome !== 'unmatched') {
    throw new Error(`${input.id} is not money that named no transfer (${event.outcome ?? 'not handled'}); nothing to match`);
  }
  if (event.resolved_at) throw new Error(`${input.id} was resolved already`);
  const transfer = await db.selectFrom('transfers').select(DEPOSIT_TRANSFER_COLUMNS).where('id', '=', input.transferId).executeTakeFirst();
  if (!transfer) throw new Error(`No such transfer: ${input.transferId}`);

  const received = receivedPayment(event);
  const money = await unmatchedDepositOf(db, received);
  // Claimed, and let go from the platform's books, in one transaction: from here the transfer's own
  // books take the money, as its deposit or as a stray deposit owed to its sender.
  const claimed = await db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('rail_events').set({ transfer_id: transfer.id, resolved_by: input.operator })
      .where('id', '=', input.id).where('outcome', '=', 'unmatched').where('resolved_at', 'is', null)
      .where((eb) => eb.or([eb('transfer_id', 'is', null), eb('transfer_id', '=', transfer.id)]))
      .returning('id').executeTakeFirst();
    if (row) await releaseUnclaimedMoney(trx, money, `money that named no transfer, matched to ${transfer.id} by ${input.operator}`);
    return Boolean(row);
  });
  if (!claimed) {
    const now = await db.selectFrom('rail_events').select(['transfer_id', 'resolved_at']).where('id', '=', input.id).executeTakeFirstOrThrow();
    throw new Error(now.resolved_at ? `${input.id} was resolved already` : `${input.id} is being matched to ${now.transfer_id}, not ${transfer.id}`);
  }

  const { outcome } = await depositForTransfer(deps, transfer, received);
  await db.updateTable('rail_events')
    .set({ outcome, handled_at: new Date(), resolved_note: input.note ?? `matched to ${transfer.id}: ${outcome}`, resolved_at: new Date() })
    .where('id', '=', input.id).execute();
  return outcome;
}
