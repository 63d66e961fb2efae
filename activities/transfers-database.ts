import { ApplicationFailure } from '@temporalio/activity';
import type { Transaction } from 'kysely';
import type { Db } from '../src/db';
import { tenantOf } from '../src/db/tenant-scope';
import type { Database, PaymentKind, PaymentStatus, ReviewDecision, TransferRow, TransferState } from '../src/db/schema';
import { recordEvents } from '../src/domain/events';
import { transferStateEvent } from '../src/domain/event-catalogue';
import {
  PROGRESS, TRANSITIONS, depositPostings, payoutPostings, payoutReversalPostings, refundPostings, refundReversalPostings, type RefundDestination,
} from '../src/domain/transfers';
import type { ChainDeposit } from '../src/chains/chain-adapter';
import { ASSET_SCALE, formatAmount, parseAmount } from '../src/domain/money';
import { newId } from '../src/ids';
import { postTransaction, type Posting } from '../src/ledger/ledger';
import { paymentLeg, serializeTransfer, transferMoney, type StoredReceipt } from '../src/transfers/transfer';
import { FAILURE } from '../src/temporal/failures';

/** A fiat payment naming a transfer's deposit reference that the transfer did not take (src/resources/transfers/rail-events.ts). */
export interface RailStrayDeposit {
  transferId: string;
  /** The provider's id of the inbound payment: the return names it. */
  providerPaymentId: string;
  rail: string;
  currency: string;
  /** Decimal, as the provider reported it. */
  amount: string;
  /** The transfer goes on waiting for its own deposit (this one was not what it quoted). */
  stillWaiting: boolean;
}

/** A stray deposit as recorded: a token transfer (hash, sender), or a fiat payment (the provider's id; its own rail and currency). */
interface StrayDepositRecord {
  key: string;
  amountMinor: bigint;
  tx_hash?: string;
  from_address?: string;
  provider_payment_id?: string;
  rail?: string;
  currency?: string;
}

/** Each step of a transfer's life as the workflow records it: state, payments, ledger and events in one transaction. */
export type TransferStep =
  | { step: 'funds_received'; txHash?: string; from?: string; railPaymentId?: string }
  | { step: 'in_review' }
  | { step: 'hold'; reasons: string[] }
  | { step: 'review_decided'; approve: boolean; note?: string; operator: string }
  | { step: 'payment_submitted' }
  | { step: 'payment_processed'; txHash?: string; networkFee?: string }
  | { step: 'undeliverable'; reason: string; code?: string }
  | { step: 'returned'; code?: string; reason?: string }
  | { step: 'refund_submitted'; attempt?: number; destination?: RefundDestination }
  | { step: 'refund_rejected'; attempt?: number; reason: string; code?: string }
  | { step: 'refund_returned'; attempt?: number; reason: string; code: string }
  | { step: 'refunded'; finalState: 'refunded' | 'canceled'; reason?: string; attempt?: number }
  | { step: 'canceled'; reason: string };

type RefundStep = Extract<TransferStep, { step: 'refund_submitted' | 'refund_rejected' | 'refund_returned' | 'refunded' }>;
const isRefundStep = (step: TransferStep): step is RefundStep =>
  step.step === 'refund_submitted' || step.step === 'refund_rejected' || step.step === 'refund_returned' || step.step === 'refunded';

/** The state each step other than a refund's leads to (or, for steps that record without moving, the state they happen in). */
const STEP_STATE: Record<Exclude<TransferStep, RefundStep>['step'], TransferState> = {
  funds_received: 'funds_received', in_review: 'in_review', hold: 'in_review', review_decided: 'in_review', payment_submitted: 'payment_submitted',
  payment_processed: 'payment_processed', undeliverable: 'undeliverable', returned: 'returned', canceled: 'canceled',
};

/**
 * A step replayed after a crash, once the transfer has moved on, must change nothing. Refund steps
 * are told by their refund payment instead (each attempt's status; see the cases below): a refund the
 * source bank returns after it settled is retried once the transfer is already final.
 */
function alreadyPast(current: TransferState, step: TransferStep): boolean {
  if (isRefundStep(step)) return false;
  const target = STEP_STATE[step.step];
  return current !== target && PROGRESS[current] >= PROGRESS[target];
}

/** The status a refund attempt's payment has once the step was recorded. */
const REFUND_STEP_DONE: Record<RefundStep['step'], (status: PaymentStatus | undefined) => boolean> = {
  refund_submitted: (status) => status !== undefined,
  refund_rejected: (status) => status === 'failed',
  refund_returned: (status) => status === 'returned',
  refunded: (status) => status === 'settled' || status === 'returned',
};

/**
 * Payment keys are derived from the transfer and the step, so a retried step finds its own payment.
 * A refund the source bank or chain rejected may be tried again on an operator's word: attempts after
 * the first are new payments with keys of their own (`{transfer}:refund:2`, …).
 */
export const paymentKey = (transferId: string, kind: PaymentKind, attempt = 1) =>
  attempt > 1 ? `${transferId}:${kind}:${attempt}` : `${transferId}:${kind}`;

/**
 * A stray chain deposit (not the transfer's own, never credited) is a payment of its own,
 * `{transfer}:deposit:unmatched:{deposit id}`; its return to the sender `{transfer}:deposit_return:{deposit id}`.
 */
export const STRAY_DEPOSIT_KEY_PART = ':deposit:unmatched:';
export const STRAY_RETURN_KEY_PART = ':deposit_return:';
export const strayDepositKey = (transferId: string, depositId: string) => `${transferId}${STRAY_DEPOSIT_KEY_PART}${depositId}`;
export const strayReturnKey = (depositKey: string) => depositKey.replace(STRAY_DEPOSIT_KEY_PART, STRAY_RETURN_KEY_PART);
export const strayDepositKeyOf = (returnKey: string) => returnKey.replace(STRAY_RETURN_KEY_PART, STRAY_DEPOSIT_KEY_PART);

/**
 * Where a payout or refund goes, as its payment row says: recorded with the step that submits it
 * (the transfer's destination or source, or where an operator sent a rejected refund).
 */
export function paymentDestination(db: Db, transferId: string, kind: 'payout' | 'refund', attempt?: number) {
  return db.selectFrom('payments').select(['to_address', 'external_account_id'])
    .where('idempotency_key', '=', paymentKey(transferId, kind, attempt)).executeTakeFirstOrThrow();
}

export function createTransferDatabaseActivities(db: Db) {
  /** Moves the transfer to `next` unless it is there already (a retried step). False when nothing changed. */
  async function moveState(trx: Transaction<Database>, row: TransferRow, next: TransferState, set: Partial<Record<keyof TransferRow, unknown>> = {}) {
    if (row.state === next) return false;
    if (!TRANSITIONS[row.state].includes(next)) throw new Error(`transfer ${row.id}: no move from ${row.state} to ${next}`);
    const now = new Date();
    const updated = await trx.updateTable('transfers').set({ ...set, state: next, updated_at: now } as never)
      .where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    const data = serializeTransfer(updated);
    await recordEvents(trx, tenantOf(row), [
      { type: 'transfer.updated', objectId: row.id, data, previousAttributes: { state: row.state }, at: now },
      // One millisecond later, so that lists show the named event after its transfer.updated.
      { type: transferStateEvent(next as Exclude<TransferState, 'awaiting_funds'>), objectId: row.id, data, at: new Date(now.getTime() + 1) },
    ]);
    return true;
  }

  async function post(trx: Transaction<Database>, row: TransferRow, what: string, postings: Posting[]) {
    await postTransaction(trx, tenantOf(row), { idempotencyKey: `${row.id}:ledger:${what}`, description: `transfer ${what}`, referenceId: row.id, postings });
  }

  async function upsertPayment(
    trx: Transaction<Database>, row: TransferRow, kind: PaymentKind, attempt: number,
    fields: {
      status: PaymentStatus; tx_hash?: string | null; from_address?: string | null; provider_payment_id?: string | null; return_code?: string | null;
      failure_reason?: string | null;
      /** A deposit that is not the transfer's own: its amount and a key of its own. */
      unmatched?: { amountMinor: bigint; key: string; rail?: string; currency?: string };
      /** A refund an operator sends elsewhere than the source. */
      destination?: RefundDestination;
    },
  ) {
    const now = new Date();
    const leg = paymentLeg(row, kind);
    await trx.insertInto('payments').values({
      id: newId('payment', now.getTime()),
      developer_id: row.developer_id,
      environment: row.environment,
      transfer_id: row.id,
      kind,
      rail: fields.unmatched?.rail ?? leg.rail,
      currency: fields.unmatched?.currency ?? leg.currency,
      amount_minor: (fields.unmatched?.amountMinor ?? leg.amountMinor).toString(),
      status: fields.status,
      external_account_id: fields.destination ? fields.destination.externalAccountId : leg.externalAccountId,
      from_address: fields.from_address ?? null,
      to_address: fields.destination ? fields.destination.toAddress : leg.toAddress,
      provider_payment_id: fields.provider_payment_id ?? null,
      tx_hash: fields.tx_hash ?? null,
      signed_transaction: null,
      network_fee: null,
      return_code: fields.return_code ?? null,
      failure_reason: fields.failure_reason ?? null,
      idempotency_key: fields.unmatched?.key ?? paymentKey(row.id, kind, attempt),
      settles_at: null,
      created_at: now,
      updated_at: now,
    }).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
  }

  /**
   * Deposits that are not the transfer's own, listed as failed deposits and never credited: each
   * goes back to its sender. `stillWaiting`: the transfer goes on waiting for its deposit, and its
   * `state_reason` tells the sender what went wrong with this one.
   */
  async function recordStrayDeposits(transferId: string, deposits: StrayDepositRecord[], stillWaiting: boolean) {
    await db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('transfers').selectAll().where('id', '=', transferId).forUpdate().executeTakeFirstOrThrow();
      // "1.00 usdc … the quoted 3.00"; naming the currency and rail only where they differ from the quote.
      const otherRail = (d: StrayDepositRecord) => d.rail !== undefined && d.rail !== row.source_rail;
      const otherCurrency = (d: StrayDepositRecord) => d.currency !== undefined && d.currency !== row.source_currency;
      const received = (d: StrayDepositRecord) => {
        const currency = d.currency ?? row.source_currency;
        return `${formatAmount(d.amountMinor, ASSET_SCALE[currency] ?? 2)} ${currency}${otherRail(d) ? ` over ${d.rail}` : ''}`;
      };
      const quoted = (d: StrayDepositRecord) => formatAmount(BigInt(row.amount_minor), ASSET_SCALE[row.source_currency]!)
        + (otherRail(d) || otherCurrency(d) ? ` ${row.source_currency}` : '') + (otherRail(d) ? ` over ${row.source_rail}` : '');
      for (const d of deposits) {
        const reason = row.state !== 'awaiting_funds'
          ? `arrived after the transfer was ${row.state === 'canceled' ? 'canceled' : 'funded'}; not credited, returned to the sender`
          : d.amountMinor === BigInt(row.amount_minor) && !otherRail(d) && !otherCurrency(d)
            ? 'a further deposit of the quoted amount; not credited, returned to the sender'
            : `${received(d)} does not match the quoted ${quoted(d)}; not credited, returned to the sender`;
        await upsertPayment(trx, row, 'deposit', 1, {
          status: 'failed', tx_hash: d.tx_hash, from_address: d.from_address, provider_payment_id: d.provider_payment_id, failure_reason: reason,
          unmatched: { amountMinor: d.amountMinor, key: d.key, rail: d.rail, currency: d.currency },
        });
      }
      if (!stillWaiting || row.state !== 'awaiting_funds' || deposits.length === 0) return;
      const last = deposits[deposits.length - 1]!;
      const stateReason = `received ${received(last)}, not the quoted ${quoted(last)}: `
        + 'only a deposit of exactly the quoted amount funds the transfer';
      await setStateReason(trx, row, stateReason);
    });
  }

  /** A change of `state_reason` alone, announced as `transfer.updated`. */
  async function setStateReason(trx: Transaction<Database>, row: TransferRow, reason: string | null) {
    if (row.state_reason === reason) return;
    const now = new Date();
    const updated = await trx.updateTable('transfers').set({ state_reason: reason, updated_at: now })
      .where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    await recordEvents(trx, tenantOf(row), [
      { type: 'transfer.updated', objectId: row.id, data: serializeTransfer(updated), previousAttributes: { state_reason: row.state_reason }, at: now },
    ]);
  }

  async function setPayment(trx: Transaction<Database>, transferId: string, kind: PaymentKind, set: Record<string, unknown>, attempt = 1) {
    await trx.updateTable('payments').set({ ...set, updated_at: new Date() } as never)
      .where('idempotency_key', '=', paymentKey(transferId, kind, attempt)).execute();
  }

  return {
    async recordTransferStep(input: { transferId: string } & TransferStep): Promise<{ state: TransferState }> {
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('transfers').selectAll().where('id', '=', input.transferId).forUpdate().executeTakeFirstOrThrow();
        if (alreadyPast(row.state, input)) return { state: row.state };
        if (isRefundStep(input)) {
          const refund = await trx.selectFrom('payments').select('status')
            .where('idempotency_key', '=', paymentKey(row.id, 'refund', input.attempt ?? 1)).executeTakeFirst();
          if (REFUND_STEP_DONE[input.step](refund?.status)) return { state: row.state };
        }
        const money = transferMoney(row);
        // The state the step leaves the transfer in, when it moved it.
        let reached: TransferState | undefined;
        const move = async (r: TransferRow, next: TransferState, set: Partial<Record<keyof TransferRow, unknown>> = {}) => {
          if (await moveState(trx, r, next, set)) reached = next;
        };
        const receipt = row.receipt as unknown as StoredReceipt;
        switch (input.step) {
          case 'funds_received':
            if (row.state !== 'awaiting_funds') break;
            await upsertPayment(trx, row, 'deposit', 1, { status: 'settled', tx_hash: input.txHash ?? null, from_address: input.from ?? null, provider_payment_id: input.railPaymentId ?? null });
            await post(trx, row, 'deposit', depositPostings(money));
            await move(row, 'funds_received', {
              state_reason: null, // what a mismatched deposit showed while the transfer waited
              ...(input.txHash ? { receipt: JSON.stringify({ ...receipt, source_tx_hash: input.txHash }) } : {}),
            });
            break;
          case 'in_review':
            await move(row, 'in_review');
            break;
          case 'hold':
            await trx.updateTable('transfers').set({ review_reasons: JSON.stringify(input.reasons), state_reason: `on_hold: ${input.reasons.join('; ')}`, updated_at: new Date() })
              .where('id', '=', row.id).execute();
            break;
          case 'review_decided': {
            if (row.review_decision) break; // recorded by an earlier attempt
            const now = new Date();
            const decision: ReviewDecision = {
              decision: input.approve ? 'approve' : 'reject', note: input.note ?? null, operator: input.operator, decided_at: now.toISOString(),
            };
            const updated = await trx.updateTable('transfers').set({ review_decision: JSON.stringify(decision), updated_at: now })
              .where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
            await recordEvents(trx, tenantOf(row), [
              { type: 'transfer.updated', objectId: row.id, data: serializeTransfer(updated), previousAttributes: { review_decision: null }, at: now },
            ]);
            break;
          }
          case 'payment_submitted':
            if (row.state !== 'in_review') break;
            await upsertPayment(trx, row, 'payout', 1, { status: 'pending' });
            await post(trx, row, 'payout', payoutPostings(money));
            await move(row, 'payment_submitted', { state_reason: null });
            break;
          case 'payment_processed':
            await setPayment(trx, row.id, 'payout', { status: 'settled', ...(input.networkFee ? { network_fee: input.networkFee } : {}) });
            await move(row, 'payment_processed', input.txHash ? { receipt: JSON.stringify({ ...receipt, destination_tx_hash: input.txHash }) } : {});
            break;
          case 'undeliverable':
            await setPayment(trx, row.id, 'payout', { status: 'failed', failure_reason: input.reason, return_code: input.code ?? null });
            await move(row, 'undeliverable', { state_reason: input.reason, return_code: input.code ?? null });
            break;
          case 'returned':
            // The payout's money is back with the platform: its ledger legs (fees included) are reversed.
            if (row.state === 'payment_processed') await setPayment(trx, row.id, 'payout', { status: 'returned', return_code: input.code ?? null });
            await upsertPayment(trx, row, 'return', 1, { status: 'settled', return_code: input.code ?? row.return_code });
            await post(trx, row, 'payout-reversal', payoutReversalPostings(money));
            await move(row, 'returned', {
              return_code: input.code ?? row.return_code, state_reason: input.reason ?? row.state_reason,
            });
            break;
          case 'refund_submitted': {
            const attempt = input.attempt ?? 1;
            await upsertPayment(trx, row, 'refund', attempt, { status: 'pending', destination: input.destination });
            await post(trx, row, attempt > 1 ? `refund:${attempt}` : 'refund', refundPostings(money));
            // A retried refund replaces the rejection shown to operators; a first one keeps a return's reason.
            const reason = attempt > 1 ? `refund retried (attempt ${attempt})` : row.state === 'returned' ? row.state_reason : 'refunding to the source';
            await trx.updateTable('transfers').set({ state_reason: reason, updated_at: new Date() }).where('id', '=', row.id).execute();
            break;
          }
          case 'refund_rejected': {
            // The money came back to the platform: the refund's ledger legs are reversed and the
            // transfer waits, visibly, for an operator to try again.
            const attempt = input.attempt ?? 1;
            await setPayment(trx, row.id, 'refund', { status: 'failed', failure_reason: input.reason, return_code: input.code ?? null }, attempt);
            await post(trx, row, `refund-reversal:${attempt}`, refundReversalPostings(money));
            await setStateReason(trx, row, `refund rejected: ${input.reason}; waiting for an operator to retry the refund`);
            break;
          }
          case 'refund_returned': {
            // It had settled and the transfer is final (refunded or canceled), and stays so: the money
            // came back to the platform, as for a rejected refund, and waits for an operator's retry.
            const attempt = input.attempt ?? 1;
            await setPayment(trx, row.id, 'refund', { status: 'returned', failure_reason: input.reason, return_code: input.code }, attempt);
            await post(trx, row, `refund-reversal:${attempt}`, refundReversalPostings(money));
            await setStateReason(trx, row, `refund ${input.reason}; waiting for an operator to retry the refund`);
            break;
          }
          case 'refunded': {
            await setPayment(trx, row.id, 'refund', { status: 'settled', failure_reason: null }, input.attempt ?? 1);
            // A refund's failures and retries were shown while they lasted; once it settled, the transfer
            // says again why its money went back.
            const payout = await trx.selectFrom('payments').select(['status', 'failure_reason'])
              .where('idempotency_key', '=', paymentKey(row.id, 'payout')).executeTakeFirst();
            const returnReason = payout?.status === 'failed' ? payout.failure_reason
              : payout?.status === 'returned' ? `returned by the receiving bank (${row.return_code})` : null;
            const reason = input.reason ?? returnReason ?? row.state_reason;
            // A retry of a refund the source bank returned settles once the transfer is already final.
            if (row.state === input.finalState) await setStateReason(trx, row, reason);
            else await move(row, input.finalState, { state_reason: reason });
            break;
          }
          case 'canceled':
            await move(row, 'canceled', { state_reason: input.reason });
            break;
        }
        return { state: reached ?? row.state };
      });
    },

    /**
     * Token transfers to a transfer's deposit address that are not its deposit (another amount, the
     * quoted amount once more, or anything after the transfer stopped waiting): listed as failed
     * deposits, never credited, and returned to their sender (workflows/stray-deposit-return.ts).
     * While the transfer still waits for funds, its `state_reason` tells the sender what went wrong.
     */
    async recordUnmatchedDeposits(input: { transferId: string; deposits: ChainDeposit[]; stillWaiting: boolean }) {
      await recordStrayDeposits(input.transferId, input.deposits.map((d) => ({
        key: strayDepositKey(input.transferId, d.id), amountMinor: d.amountMinor, tx_hash: d.txHash, from_address: d.from,
      })), input.stillWaiting);
    },

    /**
     * A fiat payment that names a transfer's deposit reference but that the transfer did not take
     * (another rail, currency or amount, a second deposit, or after the transfer stopped waiting):
     * recorded like a stray chain deposit, and sent back (workflows/rail-deposit-return.ts).
     */
    async recordRailStrayDeposit(input: RailStrayDeposit): Promise<{ depositKey: string }> {
      const key = strayDepositKey(input.transferId, input.providerPaymentId);
      const amountMinor = parseAmount(input.amount, ASSET_SCALE[input.currency] ?? 2);
      if (amountMinor === null) throw ApplicationFailure.nonRetryable(`${input.amount} is not an amount of ${input.currency}`, FAILURE.BadAmount);
      await recordStrayDeposits(input.transferId, [{
        key, amountMinor, provider_payment_id: input.providerPaymentId, rail: input.rail, currency: input.currency,
      }], input.stillWaiting);
      return { depositKey: key };
    },

    /** A payout or refund attempt failed: counted and shown to operators on the payment and the transfer. */
    async recordPaymentFailure(input: { transferId: string; kind: PaymentKind; reason: string; attempt?: number }) {
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('payments').set((eb) => ({ attempts: eb('attempts', '+', 1), failure_reason: input.reason, updated_at: new Date() }))
          .where('idempotency_key', '=', paymentKey(input.transferId, input.kind, input.attempt)).execute();
        if (input.kind === 'refund') {
          await trx.updateTable('transfers').set({ state_reason: `refund failing: ${input.reason}`, updated_at: new Date() }).where('id', '=', input.transferId).execute();
        }
      });
    },

    async recordPaymentSent(input: { transferId: string; kind: PaymentKind; providerPaymentId?: string; txHash?: string; settlesAt?: number; attempt?: number }) {
      await db.updateTable('payments').set((eb) => ({
        status: 'submitted',
        provider_payment_id: input.providerPaymentId ?? null,
        ...(input.txHash ? { tx_hash: input.txHash } : {}),
        settles_at: input.settlesAt ? new Date(input.settlesAt) : null,
        attempts: eb('attempts', '+', 1),
        updated_at: new Date(),
      })).where('idempotency_key', '=', paymentKey(input.transferId, input.kind, input.attempt)).where('status', '=', 'pending').execute();
    },
  };
}

export type TransferDatabaseActivities = ReturnType<typeof createTransferDatabaseActivities>;
