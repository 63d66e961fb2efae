import type { TransferState } from '../src/db/schema';
import { reviewTransfer, type PayeeRefusal, type TransferReviewLimits } from '../src/transfers/review';
import { recordTransferSteps, type TransferStep } from '../src/transfers/steps';

export type { TransferReviewLimits };

/** Hold reasons for an operator, or why the payee cannot be paid at all (then nothing is sent: refunded). */
type ReviewOutcome = { reasons: string[]; undeliverable?: PayeeRefusal };

type FundsReceived = Omit<Extract<TransferStep, { step: 'funds_received' }>, 'step'>;

/** The in_review checks (src/transfers/review.ts): any reason holds the transfer for an operator's decision. */
export function createTransferReviewActivities(deps: Parameters<typeof reviewTransfer>[0]) {
  return {
    async reviewTransfer(input: { transferId: string }): Promise<ReviewOutcome> {
      return reviewTransfer(deps, input.transferId);
    },

    /**
     * The deposit arrived: funds_received and in_review recorded in one transaction, then the
     * review, in one local activity (a retry records nothing twice and reviews again).
     */
    async receiveDepositAndReview(input: { transferId: string; deposit: FundsReceived }): Promise<{ state: TransferState } & ReviewOutcome> {
      const { state, transfer } = await recordTransferSteps(deps.db, input.transferId, [{ step: 'funds_received', ...input.deposit }, { step: 'in_review' }]);
      return { state, ...(await reviewTransfer(deps, input.transferId, transfer)) };
    },
  };
}

export type TransferReviewActivities = ReturnType<typeof createTransferReviewActivities>;
