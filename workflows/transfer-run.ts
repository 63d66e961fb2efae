import { condition, proxyLocalActivities, setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { TransferDatabaseActivities } from '../activities/transfers-database';
import type { TransferState } from '../src/db/schema';
import { InvalidDataRefusals } from '../src/temporal/failures';
import { TransferStateAttr } from '../src/temporal/search-attributes';
import {
  cancelTransfer, decideReview, depositReceived, offerDeposit, paymentReturned, refundReturned, retryRefund, transferStatus,
  type DepositNotice, type RefundRetryRequest, type ReviewDecisionRequest, type TransferStatus, type TransferStep, type TransferWorkflowInput,
} from './transfer-messages';
import type { RailPayoutSent } from './rail-activities';

const records = proxyLocalActivities<TransferDatabaseActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/**
 * One transfer workflow's state: what its messages (signals, updates, queries) brought in and what
 * they answer, with the two things every step does: show where it is, and record the step.
 */
export class TransferRun {
  readonly status: TransferStatus = { state: 'awaiting_funds', step: 'Waiting for the deposit', holdReasons: [] };
  deposit?: DepositNotice;
  /** A return of the payout, or of the refund, that named no payment. */
  returnCode?: string;
  refundReturnCode?: string;
  /** Returns that name their payment: the provider's payment id → the return code. */
  readonly returnedPayments = new Map<string, string>();
  cancelReason?: string;
  decision?: ReviewDecisionRequest;
  /** Decisions whose record failed on invalid data, with why: their Update is refused. */
  readonly refusedDecisions = new InvalidDataRefusals<ReviewDecisionRequest>();
  onHold = false;
  /** The review found the payee cannot be paid (nothing is sent; the funds go back). */
  undeliverable?: { reason: string; code?: string };
  payoutStarted = false;
  /** The payout, sent by the activity that reviewed the transfer (bank rail to bank rail). */
  sentPayout?: RailPayoutSent;
  /** A cancellation is answered once the transfer is canceled, or its refund under way. */
  settledCancel = false;
  refundRejected = false;
  refundRetry?: RefundRetryRequest;

  constructor(readonly input: TransferWorkflowInput) {}

  /** What the Temporal UI and the status query show: the state, the step, the hold reasons. */
  show(step: string) {
    const { status } = this;
    status.step = step;
    const reasons = status.holdReasons.length ? `\n\nHold reasons:\n${status.holdReasons.map((r) => `- ${r}`).join('\n')}` : '';
    setCurrentDetails(`**${status.state}** — ${step}${reasons}`);
  }

  /** Records a step (one database transaction) and follows the state it leaves, as a search attribute too. */
  async record(step: TransferStep) {
    const { state } = await records.recordTransferStep({ transferId: this.input.transferId, ...step });
    this.follow(state);
  }

  /** Follows the state an activity left the transfer in, as a search attribute too. */
  follow(state: TransferState) {
    if (state === this.status.state) return;
    this.status.state = state;
    upsertSearchAttributes([{ key: TransferStateAttr, value: state }]);
  }

  /** The return code of a rail payment, once it came back. */
  returnOf(railPaymentId: string, kind: 'payout' | 'refund'): string | undefined {
    return (kind === 'payout' ? this.returnCode : this.refundReturnCode) ?? this.returnedPayments.get(railPaymentId);
  }

  listen() {
    setHandler(transferStatus, () => this.status);
    setHandler(depositReceived, (notice) => void (this.deposit ??= notice));
    setHandler(offerDeposit, (notice) => {
      if (this.deposit) return { taken: this.deposit.railPaymentId !== undefined && this.deposit.railPaymentId === notice.railPaymentId };
      // Past the wait (expired, canceled) or a chain transfer (its watcher finds its deposit): not taken.
      if (this.cancelReason || this.input.sourceIsChain) return { taken: false };
      this.deposit = notice;
      return { taken: true };
    });
    setHandler(paymentReturned, ({ code, railPaymentId }) => {
      if (!railPaymentId) this.returnCode ??= code;
      else if (!this.returnedPayments.has(railPaymentId)) this.returnedPayments.set(railPaymentId, code);
    });
    setHandler(refundReturned, ({ code, railPaymentId }) => {
      if (!railPaymentId) this.refundReturnCode ??= code;
      else if (!this.returnedPayments.has(railPaymentId)) this.returnedPayments.set(railPaymentId, code);
    });
    setHandler(cancelTransfer, async ({ reason }) => {
      this.cancelReason ??= reason;
      await condition(() => this.settledCancel);
      return this.status;
    }, {
      validator: (_request: { reason: string }) => {
        const beforePayout = ['awaiting_funds', 'funds_received', 'in_review'].includes(this.status.state);
        if (this.payoutStarted && beforePayout) throw new Error('The transfer\'s payout is under way; it can no longer be canceled');
        if (!beforePayout) throw new Error(`The transfer is ${this.status.state}; it can no longer be canceled`);
      },
    });
    setHandler(decideReview, async (d) => {
      this.decision ??= d;
      await condition(() => !this.onHold || this.refusedDecisions.has(d));
      this.refusedDecisions.throwIfRefused(d);
      return this.status;
    }, { validator: (_decision: ReviewDecisionRequest) => { if (!this.onHold) throw new Error(`The transfer is not on hold (${this.status.state})`); } });
    setHandler(retryRefund, async (request) => {
      this.refundRetry ??= request;
      await condition(() => !this.refundRejected);
      return this.status;
    }, {
      validator: (_request: RefundRetryRequest) => {
        if (!this.refundRejected) throw new Error(`The transfer has no rejected or returned refund to retry (${this.status.state})`);
      },
    });
  }
}
