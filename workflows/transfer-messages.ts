import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RefundDestination } from '../src/domain/transfers';
import type { TransferState } from '../src/db/schema';
import type { PaymentSent } from '../src/payments/store';

// The transfer workflow's input and messages (signals, updates, queries): what the API and the
// operators' tools send it, importable without the workflow's code (workflows/transfer.ts); and the
// steps it records (src/transfers/steps.ts records each).

export interface TransferWorkflowInput {
  transferId: string;
  sourceIsChain: boolean;
  destinationIsChain: boolean;
  /** Funds that have not arrived by then cancel the transfer. */
  depositExpiryMs: number;
  /**
   * Started with a delay of `depositExpiryMs` (a bank deposit's transfer): no task runs until its
   * deposit or a cancel arrives (an Update starts the first task at once) or the wait is over, so
   * the wait counts from the workflow's start, not from its first task.
   */
  startsOnDeposit?: boolean;
  /** How long the receiving bank may return a settled payout (on the sandbox clock); 0 on chains. */
  returnWindowMs: number;
  /**
   * How long the source bank may return a settled refund (on the sandbox clock); 0 on chains. Absent
   * in workflows started before refunds were watched.
   */
  refundReturnWindowMs?: number;
  /** How long one chain-watching activity waits before the workflow looks again. */
  chainWatchMs: number;
  /** The wallet that sends the deposit (signed by the platform), when the source is one. */
  sourceWalletId?: string;
  /** The source wallet is an MPC wallet: its deposit waits for the customer's co-signature, for up to `mpcSignatureExpiryMs`. */
  sourceWalletIsMpc?: boolean;
  mpcSignatureExpiryMs?: number;
  /** The funds come from a platform account (reserved at creation): taken at once, refunded to it. */
  sourceIsAccount?: boolean;
  /** The payout is a credit to a platform account, in the ledger. */
  destinationIsAccount?: boolean;
  /** A standing route's deposit, received (a chain's: confirmed) before the transfer existed: taken at once. */
  routeDeposit?: DepositNotice;
  /** The route no longer forwards (deactivated): its deposit is taken, then goes back as a cancellation with this reason. */
  routeDepositRefused?: string;
}

export interface DepositNotice {
  railPaymentId?: string;
  txHash?: string;
  from?: string;
}

export interface TransferStatus {
  state: TransferState;
  step: string;
  holdReasons: string[];
}

/**
 * The deposit arrived on the source rail (sandbox route, or the provider's webhook in production).
 * Superseded by `offerDeposit`, which answers whether the money was taken; kept for workflows whose
 * history holds the signal.
 */
export const depositReceived = defineSignal<[DepositNotice]>('depositReceived');
/**
 * A fiat deposit arrived naming this transfer: taken as its funds (`taken`), or not, because the
 * transfer already has its deposit or has stopped waiting (the caller then sends the money back).
 * Answered from the workflow's own state, so that two deposits, or a deposit and the expiry or a
 * cancellation, can never both count. Offering the same payment again answers `taken` again.
 */
export const offerDeposit = defineUpdate<{ taken: boolean }, [DepositNotice]>('offerDeposit');
/**
 * A payment the workflow sent came back; `railPaymentId` names which (the provider's id), so that a
 * late report of an earlier refund attempt never counts for a later one. Signals sent before it was
 * named (histories of earlier releases) count for the payment being watched.
 */
export interface ReturnNotice { code: string; railPaymentId?: string }
/** The receiving bank returned the payout (sandbox route, or the provider's webhook). */
export const paymentReturned = defineSignal<[ReturnNotice]>('paymentReturned');
/** The source bank returned a settled refund (sandbox route, or the provider's webhook). */
export const refundReturned = defineSignal<[ReturnNotice]>('refundReturned');
/** DELETE /v0/transfers/{id}: accepted only before the payout; answers once the cancellation is recorded or under way. */
export const cancelTransfer = defineUpdate<TransferStatus, [{ reason: string }]>('cancelTransfer');
/** An operator's decision on a held transfer; `operator` names who decided, for the audit record. */
export interface ReviewDecisionRequest {
  approve: boolean;
  note?: string;
  operator?: string;
}
export const decideReview = defineUpdate<TransferStatus, [ReviewDecisionRequest]>('decideReview');
/**
 * An operator tries a rejected refund again: a new payment to the source, or to `destination` (checked
 * by the API); `operator` names who.
 */
export interface RefundRetryRequest {
  operator?: string;
  destination?: RefundDestination;
}
export const retryRefund = defineUpdate<TransferStatus, [RefundRetryRequest]>('retryRefund');
export const transferStatus = defineQuery<TransferStatus>('transferStatus');

/** Each step of a transfer's life as the workflow records it: state, payments, ledger and events in one transaction. */
export type TransferStep =
  | { step: 'funds_received'; txHash?: string; from?: string; railPaymentId?: string }
  | { step: 'in_review' }
  | { step: 'hold'; reasons: string[] }
  | { step: 'review_decided'; approve: boolean; note?: string; operator: string }
  | { step: 'payment_submitted' }
  | {
      step: 'payment_processed'; txHash?: string; networkFee?: string;
      /** A rail payout that settled as it was sent, in the activity that sent it: the payment's provider id, marked sent and settled at once. */
      railPayout?: PaymentSent;
    }
  | { step: 'undeliverable'; reason: string; code?: string }
  | { step: 'returned'; code?: string; reason?: string }
  | { step: 'refund_submitted'; attempt?: number; destination?: RefundDestination }
  | { step: 'refund_rejected'; attempt?: number; reason: string; code?: string }
  | { step: 'refund_returned'; attempt?: number; reason: string; code: string }
  | { step: 'refunded'; finalState: 'refunded' | 'canceled'; reason?: string; attempt?: number }
  | { step: 'canceled'; reason: string };
