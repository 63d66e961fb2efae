import type { TransferState } from '../src/db/schema';
import type { RailAdapter } from '../src/providers/rails';
import { reviewRead, reviewTransfer, transferForReview, type PayeeRefusal, type TransferReviewLimits } from '../src/transfers/review';
import { recordTransferSteps, type TransferStep } from '../src/transfers/steps';
import { sendRecordedRailPayout, type RailPayoutSent } from './fiat-rails';

export type { TransferReviewLimits };

/** Hold reasons for an operator, or why the payee cannot be paid at all (then nothing is sent: refunded). */
type ReviewOutcome = { reasons: string[]; undeliverable?: PayeeRefusal };

type FundsReceived = Omit<Extract<TransferStep, { step: 'funds_received' }>, 'step'>;

/** The in_review checks (src/transfers/review.ts): any reason holds the transfer for an operator's decision. */
export function createTransferReviewActivities(deps: Parameters<typeof reviewTransfer>[0] & { rails: RailAdapter }) {
  return {
    async reviewTransfer(input: { transferId: string }): Promise<ReviewOutcome> {
      return reviewTransfer(deps, input.transferId);
    },

    /**
     * The deposit arrived: funds_received and in_review recorded in one transaction, then the
     * review, in one local activity (a retry records nothing twice and reviews again).
     */
    async receiveDepositAndReview(input: { transferId: string; deposit: FundsReceived }): Promise<{ state: TransferState } & ReviewOutcome> {
      const { state } = await recordTransferSteps(deps.db, input.transferId, [{ step: 'funds_received', ...input.deposit }, { step: 'in_review' }]);
      return { state, ...(await reviewTransfer(deps, input.transferId)) };
    },

    /**
     * The deposit of a transfer from a bank rail to a bank rail arrived. The review comes first (the
     * transfer as created, the deposit's sender from its rail event); then one transaction records
     * funds_received, in_review and, when nothing holds the transfer and the payee can be paid,
     * payment_submitted; then the payout is sent (an instant rail's settling at once is recorded in
     * the same statement as payment_processed). One local activity where the review and the payout
     * were two, and one transaction where they were two. A retry reviews again, records nothing
     * twice and sends the same payment (its idempotency key).
     */
    async receiveReviewAndPayOut(input: { transferId: string; deposit: FundsReceived }): Promise<{ state: TransferState; payout?: RailPayoutSent } & ReviewOutcome> {
      // The transfer as created, read with the review's facts in one query.
      const read = await transferForReview(deps.db, input.transferId, input.deposit.railPaymentId);
      const created = read.transfer;
      // A retry after the payout was recorded (a crash after the commit) only sends it, as the same payment.
      const paying = created.state === 'payment_submitted' || created.state === 'payment_processed';
      const outcome: ReviewOutcome = paying ? { reasons: [] } : await reviewRead(deps, read);
      const payable = outcome.reasons.length === 0 && !outcome.undeliverable;
      const steps: TransferStep[] = [{ step: 'funds_received', ...input.deposit }, { step: 'in_review' }, ...(payable ? [{ step: 'payment_submitted' as const }] : [])];
      // Recorded on the transfer as read above, unless it changed since (then under its lock).
      const { state, transfer } = await recordTransferSteps(deps.db, input.transferId, steps, created);
      if (!payable) return { state, ...outcome };
      const { state: sentState, ...payout } = await sendRecordedRailPayout(deps, transfer);
      return { state: sentState, reasons: [], payout };
    },
  };
}

export type TransferReviewActivities = ReturnType<typeof createTransferReviewActivities>;
