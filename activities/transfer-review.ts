import { reviewTransfer, type TransferReviewLimits } from '../src/transfers/review';

export type { TransferReviewLimits };

/** The in_review checks (src/transfers/review.ts): any reason holds the transfer for an operator's decision. */
export function createTransferReviewActivities(deps: Parameters<typeof reviewTransfer>[0]) {
  return {
    async reviewTransfer(input: { transferId: string }): Promise<{ reasons: string[] }> {
      return reviewTransfer(deps, input.transferId);
    },
  };
}

export type TransferReviewActivities = ReturnType<typeof createTransferReviewActivities>;
