import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { PlatformDeps } from '../deps';
import { ApiError } from '../errors';
import { formatAmount, ASSET_SCALE } from '../domain/money';
import type { Database, Environment, PaymentsTable, TransferRow } from '../db/schema';
import type { RailEvent } from '../providers/rails';
import type { returnRailDepositWorkflow } from '../../workflows/rail-deposit-return';
import { railDepositReturnWorkflowId } from '../../workflows/rail-deposit-return-messages';
import { markPaymentFailed, sentPaymentByProviderId, settledDeposits } from '../payments/store';
import { holdReturnedDepositReturn } from './stray-deposits';
import { notifyReturn, offerDepositToTransfer } from './workflow-client';
import { type Tenant, tenantOf } from '../db/tenant-scope';
import type { Db } from '../db';
import { PLATFORM_TENANT, postTransaction } from '../ledger/ledger';
import { strayDepositPostings, strayReturnPostings } from '../domain/transfers';
import { receiveVirtualAccountDeposit, type VirtualAccountOf } from '../payment-routes/virtual-account-deposits';
import type { Selectable, Transaction } from 'kysely';

/** What came of a rail event, kept on its row for operators. */
export type RailEventOutcome =
  | 'deposit_received' | 'return_received'
  /** Money that names a transfer but is not what it quoted, or came when it no longer waited: sent back to the sender. */
  | 'not_as_quoted' | 'not_awaiting_funds'
  /** Money that names no transfer: for operators to match to the transfer it was meant for, or send back. */
  | 'unmatched'
  /** Money sent back to a stray deposit's sender came back: its return is held for operators again. */
  | 'deposit_return_returned'
  /** A return of a payment we do not know, or after its workflow had closed its return window. */
  | 'unknown_payment' | 'return_window_closed';

/**
 * The outcomes that settle an event without a person; every other one is money or a return for
 * operators. Money sent back is followed on its `deposit_return` payment (held when the sender's bank
 * rejects it or sends it back; `payments held` lists those).
 */
export const HANDLED_RAIL_EVENT_OUTCOMES: readonly RailEventOutcome[] = [
  'deposit_received', 'return_received', 'not_as_quoted', 'not_awaiting_funds', 'deposit_return_returned',
];

/**
 * Handles one event once: recorded first, its outcome written when handled. A delivery that failed
 * half-way (no outcome yet) is handled again: what it sends the workflows (an Update keyed by the
 * payment, a signal, a workflow start keyed by the payment) changes nothing the second time.
 */
export async function handleRailEvent(deps: RailEventDeps, event: RailEvent, environment: Environment): Promise<{ id: string; outcome: RailEventOutcome }> {
  const { id, type, providerPaymentId } = event;
  const payload = event.type === 'payment.received'
    ? { rail: event.rail, currency: event.currency, amount: formatAmount(event.amountMinor, ASSET_SCALE[event.currency] ?? 2), reference: event.reference }
    : { code: event.code };
  const sender = event.type === 'payment.received' && event.senderName ? deps.cipher.encrypt(event.senderName) : null;
  // Recorded, or found recorded before, in one statement: the insert's row is new (no outcome yet),
  // or the row a delivery before it left; with it, the transfer a deposit's reference names, or the
  // virtual account of the event's environment (src/payment-routes/virtual-accounts.ts).
  const reference = event.type === 'payment.received' ? event.reference : null;
  const seen = await deps.db
    .with('inserted', (db) => db.insertInto('rail_events').values({
      id, type, provider_payment_id: providerPaymentId, payload: JSON.stringify(payload), sender_encrypted: sender,
      received_at: new Date(), outcome: null, transfer_id: null, handled_at: null,
    }).onConflict((oc) => oc.column('id').doNothing()).returning('outcome'))
    .with('seen', (db) => db.selectFrom('inserted').select('outcome')
      .unionAll((u) => u.selectFrom('rail_events').select('outcome').where('id', '=', id)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('inserted').select(eb.lit(1).as('one')))))))
    .selectFrom('seen')
    .leftJoin('transfers', (join) => join.on('transfers.deposit_reference', '=', reference))
    .leftJoin('payment_routes as route', (join) => join.on('route.deposit_reference', '=', reference)
      .on('route.kind', '=', 'virtual_account').on('route.environment', '=', environment))
    .select(['seen.outcome', 'route.id as route_id', 'route.developer_id as route_developer_id', ...DEPOSIT_TRANSFER_COLUMNS.map((c) => `transfers.${c}` as const)])
    .executeTakeFirstOrThrow();
  if (seen.outcome) return { id, outcome: seen.outcome as RailEventOutcome };

  const named = seen.id === null ? undefined : { id: seen.id, source_rail: seen.source_rail!, source_currency: seen.source_currency!, amount_minor: seen.amount_minor! };
  const { outcome, transferId } = event.type === 'payment.received'
    ? await receiveDeposit(deps, event, named, seen.route_id ? { id: seen.route_id, developer_id: seen.route_developer_id!, environment } : undefined)
    : await receiveReturn(deps, event);
  await deps.db.updateTable('rail_events').set({ outcome, transfer_id: transferId ?? null, handled_at: new Date() }).where('id', '=', id).execute();
  if (!HANDLED_RAIL_EVENT_OUTCOMES.includes(outcome)) {
    deps.log.warn({ rail_event_id: id, outcome, transfer_id: transferId }, 'rail event needs an operator');
  }
  return { id, outcome };
}

/**
 * A deposit that is exactly what an awaiting transfer quoted (rail, currency, amount, reference) is
 * offered to its workflow, which takes it unless it already has its deposit or has stopped waiting.
 * Money that names the transfer but is not taken goes back to its sender (workflows/rail-deposit-return.ts).
 */
async function receiveDeposit(
  deps: RailEventDeps, event: ReceivedPayment, row: DepositTransfer | undefined, route: VirtualAccountOf | undefined,
): Promise<{ outcome: RailEventOutcome; transferId?: string }> {
  if (!row && route) {
    // A virtual account's deposit: its own transfer takes it. One the account holds (another
    // currency, a transfer refused) stays with the platform for operators, as unmatched money does.
    const { transferId } = await receiveVirtualAccountDeposit(deps, route, event);
    if (transferId) return { outcome: 'deposit_received', transferId };
  }
  if (!row) {
    // The money is with the platform all the same: held in its own books (or the virtual account's
    // developer's) until an operator matches it or sends it back.
    const money = await unmatchedDepositOf(deps.db, event);
    await deps.db.transaction().execute((trx) => holdUnclaimedMoney(trx, money, 'money that named no transfer, held for operators'));
    return { outcome: 'unmatched' as const };
  }
  return depositForTransfer(deps, row, event);
}

export type ReceivedPayment = Extract<RailEvent, { type: 'payment.received' }>;

/** What handling an event needs: a virtual account's deposit creates its transfer (quote, chain legs). */
export type RailEventDeps = Pick<PlatformDeps, 'db' | 'temporal' | 'log' | 'config' | 'cipher' | 'chains' | 'rates' | 'availability'>;

/** What `depositForTransfer` reads of the transfer a deposit is for. */
export const DEPOSIT_TRANSFER_COLUMNS = ['id', 'source_rail', 'source_currency', 'amount_minor'] as const;
type DepositTransfer = Pick<TransferRow, (typeof DEPOSIT_TRANSFER_COLUMNS)[number]>;

/**
 * The transfer a deposit named, or an operator matched it to (`rail-events match`), takes it if it is
 * exactly what it quoted and it still waits; otherwise the money goes back to its sender.
 */
export async function depositForTransfer(
  deps: Pick<PlatformDeps, 'db' | 'temporal' | 'config'>,
  row: DepositTransfer,
  event: ReceivedPayment,
): Promise<{ outcome: RailEventOutcome; transferId: string }> {
  const asQuoted = row.source_rail === event.rail && row.source_currency === event.currency && BigInt(row.amount_minor) === event.amountMinor;
  if (!asQuoted) {
    await startDepositReturn(deps, row.id, event, true);
    return { outcome: 'not_as_quoted' as const, transferId: row.id };
  }
  if (await offerDepositToTransfer(deps, row.id, event.providerPaymentId)) return { outcome: 'deposit_received' as const, transferId: row.id };
  // A workflow that finished after it took this payment (an earlier delivery, cut off before its
  // outcome was written) recorded it as the transfer's deposit.
  const taken = (await settledDeposits(deps.db, [row.id])).some((d) => d.provider_payment_id === event.providerPaymentId);
  if (taken) return { outcome: 'deposit_received' as const, transferId: row.id };
  await startDepositReturn(deps, row.id, event, false);
  return { outcome: 'not_awaiting_funds' as const, transferId: row.id };
}

/** Starts the return of a payment the transfer did not take; once per payment (a redelivery finds it started). */
async function startDepositReturn(
  deps: Pick<PlatformDeps, 'temporal' | 'config'>, transferId: string, event: ReceivedPayment, stillWaiting: boolean,
) {
  const amount = formatAmount(event.amountMinor, ASSET_SCALE[event.currency] ?? 2);
  try {
    await deps.temporal.workflow.start<typeof returnRailDepositWorkflow>('returnRailDepositWorkflow', {
      workflowId: railDepositReturnWorkflowId(transferId, event.providerPaymentId),
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      args: [{ transferId, providerPaymentId: event.providerPaymentId, rail: event.rail, currency: event.currency, amount, stillWaiting }],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      staticSummary: `Return ${amount} ${event.currency} over ${event.rail} that ${transferId} did not take`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * A payout or refund the platform sent came back: its transfer's workflow hears of it while its
 * return window is open. A stray deposit's return that came back is held for operators.
 */
async function receiveReturn(deps: Pick<PlatformDeps, 'db' | 'temporal'>, event: Extract<RailEvent, { type: 'payment.returned' }>) {
  const depositReturn = await holdReturnedDepositReturn(deps.db, { providerPaymentId: event.providerPaymentId, code: event.code });
  if (depositReturn) return { outcome: 'deposit_return_returned' as const, transferId: depositReturn.transferId };
  const payment = await sentPaymentByProviderId(deps.db, event.providerPaymentId, ['payout', 'refund']);
  if (!payment) return { outcome: 'unknown_payment' as const };
  // Returned already: a repeated report (under another event id), which its workflow must not hear again.
  if (payment.status === 'returned') return { outcome: await holdLateReturn(deps.db, event), transferId: payment.transfer_id };
  try {
    await notifyReturn(deps, payment.transfer_id, event.code, payment.kind as 'payout' | 'refund', event.providerPaymentId);
  } catch (err) {
    if (!(err instanceof ApiError && err.code === 'invalid_state')) throw err;
    return { outcome: await holdLateReturn(deps.db, event), transferId: payment.transfer_id };
  }
  return { outcome: 'return_received' as const, transferId: payment.transfer_id };
}

/**
 * A payout or refund came back after its transfer's workflow had finished: the money is with the
 * platform again. A settled payment is marked returned and, in the same transaction, the ledger holds
 * the money for operators (`return_window_closed`; once, however often the provider reports it). One
 * its workflow saw returned in time is a repeated report (`return_received`): nothing moves.
 */
async function holdLateReturn(db: Db, event: { providerPaymentId: string; code: string }): Promise<RailEventOutcome> {
  return db.transaction().execute(async (trx) => {
    const payment = await sentPaymentByProviderId(trx, event.providerPaymentId, ['payout', 'refund'], { forUpdate: true });
    if (!payment) throw new Error(`no payout or refund ${event.providerPaymentId}`);
    const money = lateReturn(payment);
    if (payment.status === 'returned') return await isHeld(trx, money) ? 'return_window_closed' : 'return_received';
    if (payment.status !== 'settled') return 'return_window_closed'; // nothing left us: for operators to look at
    await markPaymentFailed(trx, { id: payment.id }, {
      status: 'returned', code: event.code, reason: `returned (${event.code}) after the return window closed; held for operators`,
    });
    await holdUnclaimedMoney(trx, money, `${payment.kind} returned after its return window, held for operators`);
    return 'return_window_closed';
  });
}

/**
 * Money with the platform that no workflow took (a deposit that named no transfer, a payment that
 * came back after its return window): the ledger holds it in `unapplied_deposits` of its rail until
 * an operator matches it to its transfer or sends it on (src/admin/rail-events.ts).
 */
export interface UnclaimedMoney {
  tenant: Tenant;
  rail: string;
  currency: string;
  amountMinor: bigint;
  /** Keys its ledger movements: one per payment, so repeated reports of it hold it once. */
  key: string;
  transferId?: string;
}

/** A deposit that named no transfer belongs to no developer yet: the platform's own books hold it. */
export function unmatchedDeposit(event: Pick<ReceivedPayment, 'providerPaymentId' | 'rail' | 'currency' | 'amountMinor'>): UnclaimedMoney {
  return { tenant: PLATFORM_TENANT, rail: event.rail, currency: event.currency, amountMinor: event.amountMinor, key: `rail_inbound:${event.providerPaymentId}` };
}

/**
 * Whose books hold a payment that funded no transfer: the developer's, when a virtual account of
 * theirs received and held it (another currency, a transfer refused); else the platform's.
 */
export async function unmatchedDepositOf(db: Db, event: Pick<ReceivedPayment, 'providerPaymentId' | 'rail' | 'currency' | 'amountMinor'>): Promise<UnclaimedMoney> {
  const held = await db.selectFrom('route_deposits').select(['developer_id', 'environment'])
    .where('deposit_key', '=', `${event.rail}:${event.providerPaymentId}`).executeTakeFirst();
  return { ...unmatchedDeposit(event), ...(held ? { tenant: tenantOf(held) } : {}) };
}

/** A payout or refund that came back late is its transfer's developer's: held in their books. */
export function lateReturn(payment: Pick<Selectable<PaymentsTable>, 'developer_id' | 'environment' | 'rail' | 'currency' | 'amount_minor' | 'idempotency_key' | 'transfer_id'>): UnclaimedMoney {
  return {
    tenant: tenantOf(payment), rail: payment.rail, currency: payment.currency, amountMinor: BigInt(payment.amount_minor),
    key: `${payment.idempotency_key}:late_return`, transferId: payment.transfer_id,
  };
}

async function isHeld(trx: Transaction<Database>, money: UnclaimedMoney) {
  return Boolean(await trx.selectFrom('ledger_transactions').select('id').where('idempotency_key', '=', `${money.key}:ledger:held`).executeTakeFirst());
}

function holdUnclaimedMoney(trx: Transaction<Database>, money: UnclaimedMoney, description: string) {
  return postTransaction(trx, money.tenant, {
    idempotencyKey: `${money.key}:ledger:held`, description, referenceId: money.transferId,
    postings: strayDepositPostings(money.rail, money.currency, money.amountMinor),
  });
}

/**
 * Lets held money go (an operator sent it on through the provider, or matched it to its transfer,
 * which then takes it as its deposit): once, and only if the ledger held it.
 */
export async function releaseUnclaimedMoney(trx: Transaction<Database>, money: UnclaimedMoney, description: string) {
  if (!(await isHeld(trx, money))) return;
  await postTransaction(trx, money.tenant, {
    idempotencyKey: `${money.key}:ledger:released`, description, referenceId: money.transferId,
    postings: strayReturnPostings(money.rail, money.currency, money.amountMinor),
  });
}
