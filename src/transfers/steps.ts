import { sql, type Compilable, type Kysely, type Transaction } from 'kysely';
import type { Db } from '../db';
import type { Database, PaymentKind, PaymentStatus, TransferRow, TransferState } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { transferStateEvent } from '../domain/event-catalogue';
import { changeMade, isStatementAborted, recordEvents, recordEventsIfChanged, type OutboxEvent } from '../domain/events';
import {
  PROGRESS, TRANSITIONS, accountReleasePostings, depositPostings, payoutPostings, payoutReversalPostings, refundPostings, refundReversalPostings,
  type RefundDestination, type TransferMoney,
} from '../domain/transfers';
import { movementsOfStatement, postTransactions, type Movement, type Posting } from '../ledger/ledger';
import { paymentKey } from '../payments/keys';
import { insertPayments, paymentsInsert, markPaymentFailed, markPaymentSettled, findPayment, paymentSettledUpdate, type NewPayment, type PaymentSent } from '../payments/store';
import { paymentLeg, serializeTransfer, transferMoney, type StoredReceipt } from './transfer';
import type { TransferStep } from '../../workflows/transfer-messages';

export type { TransferStep };

type StepName = TransferStep['step'];
type RefundStep = Extract<TransferStep, { step: 'refund_submitted' | 'refund_rejected' | 'refund_returned' | 'refunded' }>;
const isRefundStep = (step: TransferStep): step is RefundStep =>
  step.step === 'refund_submitted' || step.step === 'refund_rejected' || step.step === 'refund_returned' || step.step === 'refunded';

/** The state each step other than a refund's leads to (or, for steps that record without moving, the state they happen in). */
const STEP_STATE: Record<Exclude<TransferStep, RefundStep>['step'], TransferState> = {
  funds_received: 'funds_received', in_review: 'in_review', hold: 'in_review', review_decided: 'in_review', payment_submitted: 'payment_submitted',
  payment_processed: 'payment_processed', undeliverable: 'undeliverable', returned: 'returned', canceled: 'canceled',
};

/** The status a refund attempt's payment has once the step was recorded. */
const REFUND_STEP_DONE: Record<RefundStep['step'], (status: PaymentStatus | undefined) => boolean> = {
  refund_submitted: (status) => status !== undefined,
  refund_rejected: (status) => status === 'failed',
  refund_returned: (status) => status === 'returned',
  refunded: (status) => status === 'settled' || status === 'returned',
};

/**
 * A step replayed after a crash, once the transfer has moved on, must change nothing. Refund steps
 * are told by their refund payment instead (each attempt's status): a refund the source bank returns
 * after it settled is retried once the transfer is already final.
 */
async function alreadyRecorded(trx: Transaction<Database>, row: TransferRow, step: TransferStep): Promise<boolean> {
  if (!isRefundStep(step)) {
    const target = STEP_STATE[step.step];
    return row.state !== target && PROGRESS[row.state] >= PROGRESS[target];
  }
  const refundPayment = await findPayment(trx, refund(row, step.attempt ?? 1));
  return REFUND_STEP_DONE[step.step](refundPayment?.status);
}

/** Records one step in one transaction; a step recorded before (a retried activity) changes nothing. Answers the state it leaves. */
export async function recordTransferStep(db: Db, input: { transferId: string } & TransferStep): Promise<{ state: TransferState }> {
  const { transferId, ...step } = input;
  const { state } = await recordTransferSteps(db, transferId, [step as TransferStep]);
  return { state };
}

/**
 * Records steps that follow each other (funds_received then in_review, say) in one transaction, each
 * as recordTransferStep would: a step recorded before changes nothing. The transfer's own columns
 * and the events announcing its changes are written once, at the end, as one statement. Answers the
 * state they leave, and the transfer as they left it (for the rest of the same activity; never an
 * activity's result).
 *
 * `loaded`: the transfer as the caller read it moments ago. Steps that only add payments and ledger
 * movements are then recorded on it as one statement, without a transaction: the row's update, made
 * only if the row is still as loaded (its lock taken before the ledger's, as the locked path takes
 * them), its events, the payments and the movements, all or none. A row changed meanwhile, or
 * movements that need more than one statement (accounts to create, a replay, a short account),
 * leave nothing written, and the steps are recorded on the locked row instead.
 */
export async function recordTransferSteps(db: Db, transferId: string, steps: TransferStep[], loaded?: TransferRow): Promise<{ state: TransferState; transfer: TransferRow }> {
  if (loaded && steps.every((step) => INSERTS_ONLY.has(step.step))) {
    try {
      return await recordOn(new StepRecorder(db, loaded), steps, loaded.updated_at);
    } catch (err) {
      if (!(err instanceof TransferChangedMeanwhile)) throw err;
    }
  }
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('transfers').selectAll().where('id', '=', transferId).forUpdate().executeTakeFirstOrThrow();
    return recordOn(new StepRecorder(trx, row), steps);
  });
}

/** The transfer's row is no longer as the caller loaded it: recorded on the locked row instead. */
class TransferChangedMeanwhile extends Error {}

async function recordOn(recorder: StepRecorder, steps: TransferStep[], unchangedSince?: Date) {
  for (const input of steps) {
    // A step that reads or changes payments finds those of the steps before it written.
    if (!INSERTS_ONLY.has(input.step)) await recorder.writeMoney();
    if (await alreadyRecorded(recorder.trx as Transaction<Database>, recorder.row, input)) continue;
    await (STEPS[input.step] as (s: StepRecorder, i: TransferStep) => Promise<void>)(recorder, input);
  }
  if (!(await recorder.write(unchangedSince))) throw new TransferChangedMeanwhile();
  return { state: recorder.row.state, transfer: recorder.row };
}

/**
 * A rail payout that settled as it was sent, recorded on the row the same activity has just written
 * (`known`, in payment_submitted): the payment marked sent and settled, the move to payment_processed
 * and its events, as one statement, made only if the row is still as known. A row changed meanwhile
 * is recorded as recordTransferStep records it, under the row's lock.
 */
export async function recordPayoutSettledAtOnce(db: Db, known: TransferRow, sent: PaymentSent): Promise<{ state: TransferState }> {
  if (known.state === 'payment_submitted') {
    const recorder = new StepRecorder(db, known);
    recorder.move('payment_processed');
    const settle = paymentSettledUpdate(db, payout(known), { sent }).where(changeMade);
    if (await recorder.writeIfUnchanged(known.updated_at, [settle])) return { state: recorder.row.state };
  }
  return recordTransferStep(db, { transferId: known.id, step: 'payment_processed', railPayout: sent });
}

/** The transfer columns a step changes, as a row reads them (JSON columns as values). */
type TransferChange = Partial<Pick<TransferRow, 'state' | 'state_reason' | 'receipt' | 'review_reasons' | 'review_decision' | 'return_code' | 'updated_at'>>;

/** A change as the update writes it: JSON columns serialized. */
function columnValues(change: TransferChange) {
  const { receipt, review_reasons, review_decision, ...plain } = change;
  return {
    ...plain,
    ...(receipt !== undefined ? { receipt: JSON.stringify(receipt) } : {}),
    ...(review_reasons !== undefined ? { review_reasons: review_reasons === null ? null : JSON.stringify(review_reasons) } : {}),
    ...(review_decision !== undefined ? { review_decision: review_decision === null ? null : JSON.stringify(review_decision) } : {}),
  };
}

/**
 * What steps do to the transfer in their transaction: moves, payments, postings, reasons. Payments
 * and postings are written as they come; the transfer's row is changed in memory (the row is locked
 * for the transaction) and written with its events by `write`.
 */
class StepRecorder {
  readonly money: TransferMoney;
  private change: TransferChange = {};
  private readonly events: (OutboxEvent & { at: Date })[] = [];
  /** New payments and ledger movements, written together when the row is, or before a step that reads payments. */
  private payments: NewPayment[] = [];
  private movements: Movement[] = [];

  /** `trx`: the step's transaction; outside one (steps on a loaded row, writeIfUnchanged) everything goes into the final statement. */
  constructor(readonly trx: Transaction<Database> | Kysely<Database>, public row: TransferRow) {
    this.money = transferMoney(row);
  }

  get receipt(): StoredReceipt {
    return this.row.receipt as unknown as StoredReceipt;
  }

  /** Moves the transfer to `next` unless it is there already, announcing `transfer.updated` and the state's own event. */
  move(next: TransferState, set: TransferChange = {}) {
    const before = this.row;
    if (before.state === next) return;
    if (!TRANSITIONS[before.state].includes(next)) throw new Error(`transfer ${before.id}: no move from ${before.state} to ${next}`);
    const now = nextEventTime(before);
    this.apply({ ...set, state: next, updated_at: now });
    const data = serializeTransfer(this.row);
    this.events.push(
      { type: 'transfer.updated', objectId: before.id, data, previousAttributes: { state: before.state }, at: now },
      // One millisecond later, so that lists show the named event after its transfer.updated.
      { type: transferStateEvent(next as Exclude<TransferState, 'awaiting_funds'>), objectId: before.id, data, at: new Date(now.getTime() + 1) },
    );
  }

  /** A change of `attribute` alone, announced as `transfer.updated` with its previous value. */
  announce<K extends 'state_reason' | 'review_decision'>(attribute: K, value: TransferRow[K], at = nextEventTime(this.row)) {
    const previous = this.row[attribute];
    this.apply({ [attribute]: value, updated_at: at });
    this.events.push({ type: 'transfer.updated', objectId: this.row.id, data: serializeTransfer(this.row), previousAttributes: { [attribute]: previous }, at });
  }

  /** A change of `state_reason` alone, announced as `transfer.updated`. */
  setStateReason(reason: string | null) {
    if (this.row.state_reason !== reason) this.announce('state_reason', reason);
  }

  /** Sets fields without moving or announcing (what operators see while a step is in progress). */
  setQuietly(set: TransferChange) {
    this.apply({ ...set, updated_at: new Date() });
  }

  /** The ledger transaction of this step, keyed by the transfer and `what` (once, however often the step is retried); written with the payments. */
  async post(what: string, postings: Posting[]) {
    this.movements.push({ idempotencyKey: `${this.row.id}:ledger:${what}`, description: `transfer ${what}`, referenceId: this.row.id, postings });
  }

  /** Inserts the transfer's payment of a kind (once), on the leg the transfer quoted unless an operator chose another destination. */
  insertPayment(kind: PaymentKind, attempt: number, fields: Partial<NewPayment> & Pick<NewPayment, 'status'>, destination?: RefundDestination) {
    const leg = paymentLeg(this.row, kind);
    this.payments.push({
      developer_id: this.row.developer_id, environment: this.row.environment, transfer_id: this.row.id, kind, rail: leg.rail, currency: leg.currency,
      amount_minor: leg.amountMinor, idempotency_key: paymentKey(this.row.id, kind, attempt),
      external_account_id: destination ? destination.externalAccountId : leg.externalAccountId,
      to_address: destination ? destination.toAddress : leg.toAddress,
      ...fields,
    });
  }

  /** Writes the payments the steps so far added and their ledger movements: one statement each (when nothing stands in the way). */
  async writeMoney() {
    if (!this.trx.isTransaction && (this.payments.length > 0 || this.movements.length > 0)) throw new Error('payments and ledger movements written on their own need the step\'s transaction');
    await insertPayments(this.trx, this.payments.splice(0));
    await postTransactions(this.trx as Transaction<Database>, tenantOf(this.row), this.movements.splice(0));
  }

  /**
   * Writes the steps' payments and movements and the changed columns with their events (one
   * statement; none when nothing changed). With `unchangedSince`, all of them as one statement, made
   * only if the row's updated_at is still that and the movements can be written in it; answers
   * false, writing nothing, when not (or when a change has no events to tell whether it was made).
   */
  async write(unchangedSince?: Date): Promise<boolean> {
    const changed = Object.keys(this.change).length > 0;
    if (unchangedSince) {
      if (!changed) return this.payments.length === 0 && this.movements.length === 0;
      if (this.events.length === 0 || !(await this.updateIfUnchanged(unchangedSince, [], { withMoney: true }))) return false;
      this.change = {};
      return true;
    }
    await this.writeMoney();
    if (!changed) return true;
    const update = this.trx.updateTable('transfers').set(columnValues(this.change)).where('id', '=', this.row.id);
    if (this.events.length > 0) await recordEvents(this.trx, tenantOf(this.row), this.events.splice(0), update);
    else await update.execute();
    this.change = {};
    return true;
  }

  /**
   * Writes the changed columns, their events and `alongside` (changes conditioned on `changeMade`)
   * as one statement, only if the row is still as it was loaded (its updated_at): no lock and no
   * transaction needed. Answers whether it was; a change without events (not a move) is never made
   * this way (the events' count tells whether the change was), so the caller's locked path takes it.
   */
  async writeIfUnchanged(loadedAt: Date, alongside: Compilable[]): Promise<boolean> {
    if (this.payments.length > 0 || this.movements.length > 0) throw new Error('new payments and movements need the step\'s transaction');
    return this.updateIfUnchanged(loadedAt, alongside);
  }

  /**
   * The changed columns, their events and `alongside` as one statement, made only if the row's
   * updated_at is still `loadedAt`. `withMoney`: the new payments and movements too, all or nothing
   * (a statement that could not make them all is undone, and answers false).
   */
  private async updateIfUnchanged(loadedAt: Date, alongside: Compilable[], opts: { withMoney?: boolean } = {}): Promise<boolean> {
    const tenant = tenantOf(this.row);
    const update = this.trx.updateTable('transfers').set(columnValues(this.change))
      .where('id', '=', this.row.id).where('updated_at', '=', loadedAt).returning('id');
    const payments = opts.withMoney ? this.payments.splice(0) : [];
    const movements = opts.withMoney ? this.movements.splice(0) : [];
    if (payments.length === 0 && movements.length === 0) return recordEventsIfChanged(this.trx, tenant, this.events.splice(0), update, alongside);
    const ledger = movements.length > 0 ? movementsOfStatement(tenant, movements, changeMade) : undefined;
    try {
      return await recordEventsIfChanged(this.trx, tenant, this.events.splice(0), update, [...alongside, ...(payments.length > 0 ? [paymentsInsert(this.trx, payments)] : [])], {
        ctes: ledger?.ctes, holds: ledger?.allWritten ?? sql<boolean>`true`, reason: `transfer ${this.row.id}: its step could not be recorded as one statement`,
      });
    } catch (err) {
      if (isStatementAborted(err)) return false;
      throw err;
    }
  }

  private apply(change: TransferChange) {
    this.change = { ...this.change, ...change };
    this.row = { ...this.row, ...change };
  }
}

/** A change of a transfer's `state_reason` alone, announced as `transfer.updated` (one statement, in the caller's transaction, the row locked). */
export async function setStateReason(trx: Transaction<Database>, row: TransferRow, reason: string | null): Promise<TransferRow> {
  const recorder = new StepRecorder(trx, row);
  recorder.setStateReason(reason);
  await recorder.write();
  return recorder.row;
}

/**
 * When a change of the transfer happens, as its events say: now, but always after the events of its
 * last change (at its updated_at and one millisecond later), so that two changes within the same
 * millisecond still list in the order they happened.
 */
function nextEventTime(row: TransferRow): Date {
  return new Date(Math.max(Date.now(), row.updated_at.getTime() + 2));
}

const payout = (row: TransferRow) => ({ key: paymentKey(row.id, 'payout') });
const refund = (row: TransferRow, attempt = 1) => ({ key: paymentKey(row.id, 'refund', attempt) });

/** Steps whose only writes are new payments and ledger movements: these wait for the next write. */
const INSERTS_ONLY: ReadonlySet<StepName> = new Set(['funds_received', 'in_review', 'hold', 'review_decided', 'payment_submitted']);

/** What each step records. */
const STEPS: { [K in StepName]: (s: StepRecorder, input: Extract<TransferStep, { step: K }>) => Promise<void> } = {
  async funds_received(s, input) {
    if (s.row.state !== 'awaiting_funds') return;
    s.insertPayment('deposit', 1, { status: 'settled', tx_hash: input.txHash ?? null, from_address: input.from ?? null, provider_payment_id: input.railPaymentId ?? null });
    await s.post('deposit', depositPostings(s.money));
    s.move('funds_received', {
      state_reason: null, // what a mismatched deposit showed while the transfer waited
      ...(input.txHash ? { receipt: { ...s.receipt, source_tx_hash: input.txHash } } : {}),
    });
  },

  async in_review(s) {
    s.move('in_review');
  },

  async hold(s, input) {
    s.setQuietly({ review_reasons: input.reasons, state_reason: `on_hold: ${input.reasons.join('; ')}` });
  },

  async review_decided(s, input) {
    if (s.row.review_decision) return; // recorded by an earlier attempt
    const at = nextEventTime(s.row);
    s.announce('review_decision', { decision: input.approve ? 'approve' : 'reject', note: input.note ?? null, operator: input.operator, decided_at: at.toISOString() }, at);
  },

  async payment_submitted(s) {
    if (s.row.state !== 'in_review') return;
    s.insertPayment('payout', 1, { status: 'pending' });
    await s.post('payout', payoutPostings(s.money));
    s.move('payment_submitted', { state_reason: null });
  },

  async payment_processed(s, input) {
    await markPaymentSettled(s.trx, payout(s.row), { ...(input.networkFee ? { networkFee: input.networkFee } : {}), sent: input.railPayout });
    s.move('payment_processed', input.txHash ? { receipt: { ...s.receipt, destination_tx_hash: input.txHash } } : {});
  },

  async undeliverable(s, input) {
    // Refused before the payout was sent (from in_review) there is no payout payment to mark.
    await markPaymentFailed(s.trx, payout(s.row), { status: 'failed', reason: input.reason, code: input.code });
    s.move('undeliverable', { state_reason: input.reason, return_code: input.code ?? null });
  },

  async returned(s, input) {
    // The payout's money is back with the platform: its ledger legs (fees included) are reversed.
    const code = input.code ?? s.row.return_code;
    if (s.row.state === 'payment_processed') await markPaymentFailed(s.trx, payout(s.row), { status: 'returned', code: input.code });
    s.insertPayment('return', 1, { status: 'settled', return_code: code });
    await s.post('payout-reversal', payoutReversalPostings(s.money));
    s.move('returned', { return_code: code, state_reason: input.reason ?? s.row.state_reason });
  },

  async refund_submitted(s, input) {
    const attempt = input.attempt ?? 1;
    s.insertPayment('refund', attempt, { status: 'pending' }, input.destination);
    await s.post(attempt > 1 ? `refund:${attempt}` : 'refund', refundPostings(s.money));
    // A retried refund replaces the rejection shown to operators; a first one keeps why the payout failed.
    const keepsReason = s.row.state === 'returned' || s.row.state === 'undeliverable';
    s.setQuietly({ state_reason: attempt > 1 ? `refund retried (attempt ${attempt})` : keepsReason ? s.row.state_reason : 'refunding to the source' });
  },

  async refund_rejected(s, input) {
    // The money came back to the platform: the refund's ledger legs are reversed and the transfer
    // waits, visibly, for an operator to try again.
    const attempt = input.attempt ?? 1;
    await markPaymentFailed(s.trx, refund(s.row, attempt), { status: 'failed', reason: input.reason, code: input.code });
    await s.post(`refund-reversal:${attempt}`, refundReversalPostings(s.money));
    s.setStateReason(`refund rejected: ${input.reason}; waiting for an operator to retry the refund`);
  },

  async refund_returned(s, input) {
    // It had settled and the transfer is final (refunded or canceled), and stays so: the money came
    // back to the platform, as for a rejected refund, and waits for an operator's retry.
    const attempt = input.attempt ?? 1;
    await markPaymentFailed(s.trx, refund(s.row, attempt), { status: 'returned', reason: input.reason, code: input.code });
    await s.post(`refund-reversal:${attempt}`, refundReversalPostings(s.money));
    s.setStateReason(`refund ${input.reason}; waiting for an operator to retry the refund`);
  },

  async refunded(s, input) {
    await markPaymentSettled(s.trx, refund(s.row, input.attempt ?? 1));
    // A refund's failures and retries were shown while they lasted; once it settled, the transfer
    // says again why its money went back.
    const paid = await findPayment(s.trx, payout(s.row));
    const returnReason = paid?.status === 'failed' ? paid.failure_reason
      : paid?.status === 'returned' ? `returned by the receiving bank (${s.row.return_code})` : null;
    const reason = input.reason ?? returnReason ?? s.row.state_reason;
    // A retry of a refund the source bank returned settles once the transfer is already final.
    if (s.row.state === input.finalState) s.setStateReason(reason);
    else s.move(input.finalState, { state_reason: reason });
  },

  async canceled(s, input) {
    // Canceled before it took the funds: what it reserved in its source account is spendable again.
    if (s.row.source_account_id && s.row.state === 'awaiting_funds') {
      await s.post('account-release', accountReleasePostings(s.row.source_account_id, s.row.source_currency, s.money.amountMinor));
    }
    s.move('canceled', { state_reason: input.reason });
  },
};
