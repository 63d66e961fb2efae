import {
  CancellationScope, condition, isCancellation, patched,
  proxyActivities, proxyLocalActivities, setCurrentDetails, setHandler, upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chains';
import { chainRefusal, chainRetry, chainSend, chains } from './chain-activities';
import {
  cancelTransfer, decideReview, depositReceived, offerDeposit, paymentReturned, refundReturned, retryRefund, transferStatus,
  type DepositNotice, type RefundRetryRequest, type ReviewDecisionRequest, type TransferStatus, type TransferWorkflowInput,
} from './transfer-messages';
import { rails, untilSettled } from './rail-activities';
import type { TransferReviewActivities } from '../activities/transfer-review';
import type { TransferDatabaseActivities, TransferStep } from '../activities/transfers-database';
import { invalidDataReason, refuseInvalidData } from '../src/temporal/failures';
import { TransferStateAttr } from '../src/temporal/search-attributes';
import { chainWatchTaskQueue } from '../src/temporal/task-queues';

/** How a payment the workflow sent ended (sendPayment). */
type SentPayment =
  | { settled: true; txHash?: string; networkFee?: string; railPaymentId?: string; returnsAt?: number }
  | { settled: false; reason: string; code?: string };

const records = proxyLocalActivities<TransferDatabaseActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});
// The review is a short call (in-memory screening and a few queries): a local activity, like the
// rail calls (workflows/rail-activities.ts).
const review = proxyLocalActivities<TransferReviewActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
/**
 * `transfer:{id}`: awaiting_funds → funds_received → in_review → payment_submitted →
 * payment_processed, with the branches of docs/TRANSFERS.md: cancel (before the payout; received
 * funds go back), undeliverable → returned → refunded, and returned → refunded inside the return
 * window. Each move is one database transaction (state, payments, ledger, events). Once money is
 * held, the rest runs in a non-cancellable scope: compensation always finishes.
 */
export async function transferWorkflow(input: TransferWorkflowInput): Promise<TransferStatus> {
  const status: TransferStatus = { state: 'awaiting_funds', step: 'Waiting for the deposit', holdReasons: [] };
  let deposit: DepositNotice | undefined;
  let returnCode: string | undefined;
  let refundReturnCode: string | undefined;
  /** Returns that name their payment: the provider's payment id → the return code. */
  const returnedPayments = new Map<string, string>();
  let cancelReason: string | undefined;
  let decision: ReviewDecisionRequest | undefined;
  /** Decisions whose record failed on invalid data, with why: their Update is refused. */
  const refusedDecisions = new Map<ReviewDecisionRequest, string>();
  let onHold = false;
  let payoutStarted = false;
  let settledCancel = false;
  let refundRejected = false;
  let refundRetry: RefundRetryRequest | undefined;

  const show = (step: string) => {
    status.step = step;
    setCurrentDetails(`**${status.state}** — ${step}${status.holdReasons.length ? `\n\nHold reasons:\n${status.holdReasons.map((r) => `- ${r}`).join('\n')}` : ''}`);
  };
  const record = async (step: TransferStep) => {
    const { state } = await records.recordTransferStep({ transferId: input.transferId, ...step });
    if (state !== status.state) {
      status.state = state;
      upsertSearchAttributes([{ key: TransferStateAttr, value: state }]);
    }
  };

  setHandler(transferStatus, () => status);
  setHandler(depositReceived, (notice) => void (deposit ??= notice));
  setHandler(offerDeposit, (notice) => {
    if (deposit) return { taken: deposit.railPaymentId !== undefined && deposit.railPaymentId === notice.railPaymentId };
    // Past the wait (expired, canceled) or a chain transfer (its watcher finds its deposit): not taken.
    if (cancelReason || input.sourceIsChain) return { taken: false };
    deposit = notice;
    return { taken: true };
  });
  setHandler(paymentReturned, ({ code, railPaymentId }) => {
    if (!railPaymentId) returnCode ??= code;
    else if (!returnedPayments.has(railPaymentId)) returnedPayments.set(railPaymentId, code);
  });
  setHandler(refundReturned, ({ code, railPaymentId }) => {
    if (!railPaymentId) refundReturnCode ??= code;
    else if (!returnedPayments.has(railPaymentId)) returnedPayments.set(railPaymentId, code);
  });
  setHandler(
    cancelTransfer,
    async ({ reason }) => {
      cancelReason ??= reason;
      await condition(() => settledCancel);
      return status;
    },
    {
      validator: (_request: { reason: string }) => {
        if (payoutStarted || !['awaiting_funds', 'funds_received', 'in_review'].includes(status.state)) {
          throw new Error(`The transfer is ${status.state}; it can no longer be canceled`);
        }
      },
    },
  );
  setHandler(
    decideReview,
    async (d) => {
      decision ??= d;
      await condition(() => !onHold || refusedDecisions.has(d));
      const refusal = refusedDecisions.get(d);
      if (refusal) throw refuseInvalidData(`The decision was not recorded: ${refusal}`);
      return status;
    },
    { validator: (_decision: ReviewDecisionRequest) => { if (!onHold) throw new Error(`The transfer is not on hold (${status.state})`); } },
  );
  setHandler(
    retryRefund,
    async (request) => {
      refundRetry ??= request;
      await condition(() => !refundRejected);
      return status;
    },
    { validator: (_request: RefundRetryRequest) => { if (!refundRejected) throw new Error(`The transfer has no rejected or returned refund to retry (${status.state})`); } },
  );

  show('Waiting for the deposit');
  try {
    await waitForFunds();
  } catch (err) {
    // Cancelling the workflow before any money arrived cancels the transfer.
    if (!isCancellation(err)) throw err;
    cancelReason ??= 'workflow_canceled';
  }
  // Decided in the same breath as the wait ends: from here on every offer finds a deposit or a reason.
  if (!deposit && !cancelReason) cancelReason = 'deposit_expired';
  if (cancelReason && !deposit) {
    await CancellationScope.nonCancellable(() => record({ step: 'canceled', reason: cancelReason! }));
    settledCancel = true;
    show(`Canceled: ${cancelReason}`);
    return status;
  }

  let sweep: Promise<unknown> | undefined;
  await CancellationScope.nonCancellable(async () => {
    await record({ step: 'funds_received', ...deposit });
    // A chain deposit moves from its one-transfer address into the treasury while the transfer goes
    // on; the workflow ends once it has. Histories from before sweeps existed replay without it.
    if (input.sourceIsChain && patched('sweep-chain-deposits')) {
      sweep = chains.sweepChainDeposit({ transferId: input.transferId });
      sweep.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    }
    await record({ step: 'in_review' });
    show('Screening and limits');
    const { reasons } = await review.reviewTransfer({ transferId: input.transferId });
    if (reasons.length > 0 && !cancelReason) {
      status.holdReasons = reasons;
      await record({ step: 'hold', reasons });
    }
  });
  if (status.holdReasons.length > 0 && !cancelReason) {
    onHold = true;
    show('On hold: waiting for an operator decision');
    await recordReviewDecision();
    onHold = false;
    if (decision && !decision.approve) cancelReason ??= `rejected_in_review${decision.note ? `: ${decision.note}` : ''}`;
  }

  // From here on money moves: nothing, not even cancelling the workflow, stops it half-way.
  await CancellationScope.nonCancellable(async () => {
    if (cancelReason) {
      await refundToSource('canceled', cancelReason);
      return;
    }
    payoutStarted = true;
    await record({ step: 'payment_submitted' });
    show(`Paying out on ${input.destinationIsChain ? 'the chain' : 'the rail'}`);
    const outcome = await sendPayment('payout');
    if (!outcome.settled) {
      await record({ step: 'undeliverable', reason: outcome.reason, code: outcome.code });
      show('Undeliverable: taking the funds back');
      await record({ step: 'returned', code: outcome.code });
      await refundToSource('refunded');
      return;
    }
    await record({ step: 'payment_processed', txHash: outcome.txHash, networkFee: outcome.networkFee });
    if (input.destinationIsChain || input.returnWindowMs <= 0) {
      show('Delivered (final on chain)');
      return;
    }
    show('Delivered; inside the return window');
    const code = await waitForReturn(outcome.railPaymentId!, outcome.returnsAt);
    if (code) {
      await record({ step: 'returned', code, reason: `returned by the receiving bank (${code})` });
      await refundToSource('refunded');
      return;
    }
    show('Delivered; the return window has closed');
  });
  // Started in a non-cancellable scope: cancelling the workflow does not stop it.
  if (sweep) await sweep;
  return status;

  /**
   * Waits for an operator's decision (or a cancellation) and records who released or refused the held
   * money before the decision takes effect. A decision whose data cannot be stored is refused (its
   * Update fails) and the transfer goes on waiting for another. Histories from before the record
   * existed replay without it.
   */
  async function recordReviewDecision() {
    for (;;) {
      try {
        await condition(() => decision !== undefined || cancelReason !== undefined);
      } catch (err) {
        // Cancelling the workflow while it holds received funds cancels the transfer: they go back.
        if (!isCancellation(err)) throw err;
        cancelReason ??= 'workflow_canceled';
      }
      if (!decision || !patched('record-review-decision')) return;
      const d = decision;
      try {
        await CancellationScope.nonCancellable(() => record({ step: 'review_decided', approve: d.approve, note: d.note, operator: d.operator ?? 'unnamed' }));
        return;
      } catch (err) {
        const reason = invalidDataReason(err);
        if (!reason) throw err;
        refusedDecisions.set(d, reason);
        decision = undefined;
      }
    }
  }

  async function waitForFunds() {
    const expiresAt = Date.now() + input.depositExpiryMs;
    if (!input.sourceIsChain) {
      await condition(() => deposit !== undefined || cancelReason !== undefined, input.depositExpiryMs);
      return;
    }
    // Watch the chain in periods. A DELETE stops the current watching activity at once; cancelling
    // the workflow reaches it through the root scope, and also ends this wait for the request (its
    // rejection is handled here: an unhandled one would fail every workflow task from then on).
    // The watchers have a task queue of their own (src/temporal/task-queues.ts); a period lasts up to
    // `chainWatchMs`, so the history grows by one activity per period, not per look at the chain.
    const watcher = proxyActivities<ChainActivities>({
      taskQueue: chainWatchTaskQueue(workflowInfo().taskQueue), startToCloseTimeout: '1 hour', heartbeatTimeout: '10 seconds', retry: chainRetry,
    });
    let watch: CancellationScope | undefined;
    let position: string | undefined;
    void condition(() => cancelReason !== undefined).then(() => watch?.cancel(), () => undefined);
    while (!deposit && !cancelReason && Date.now() < expiresAt) {
      watch = new CancellationScope();
      try {
        const result = await watch.run(() => watcher.watchChainDeposit({
          transferId: input.transferId, maxWaitMs: Math.min(input.chainWatchMs, expiresAt - Date.now()), fromPosition: position,
        }));
        position = result.position;
        if (result.deposit) deposit = { txHash: result.deposit.txHash, from: result.deposit.from };
      } catch (err) {
        if (!(isCancellation(err) && cancelReason)) throw err;
      }
    }
  }

  /** Waits out the payout's return window; a return arrives as a signal, or shows in the payment's status. */
  function waitForReturn(railPaymentId: string, returnsAt?: number): Promise<string | undefined> {
    return waitOutReturnWindow(railPaymentId, input.returnWindowMs, returnsAt, () => returnCode ?? returnedPayments.get(railPaymentId));
  }

  /**
   * Waits until `windowMs` has passed or the rail payment came back (`signaled()`, or its status when
   * the sandbox's decided return is due and when the window closes); the return code, if it came back.
   */
  async function waitOutReturnWindow(railPaymentId: string, windowMs: number, returnsAt: number | undefined, signaled: () => string | undefined) {
    const windowEnd = Date.now() + windowMs;
    let code = signaled();
    while (!code && Date.now() < windowEnd) {
      const wake = Math.min(returnsAt ?? windowEnd, windowEnd);
      await condition(() => signaled() !== undefined, Math.max(1, wake - Date.now()));
      code = signaled();
      if (code) break;
      const payment = await rails.railPaymentStatus({ railPaymentId });
      if (payment.status === 'returned') code = payment.code ?? 'R02';
      else if (returnsAt && returnsAt <= Date.now()) returnsAt = undefined;
    }
    return code;
  }

  /**
   * Sends the whole amount back to the source and moves to `finalState` once it has settled. A refund
   * the provider or node does not take is retried without end (visible on the transfer and the
   * payment). One the source bank or the chain rejects (account closed, address blocked) brings the
   * money back to the customer's funds; the transfer then waits, visibly, until an operator retries it.
   * A fiat refund is watched through the source rail's return window after it settled: the transfer
   * stays `refunded` (or `canceled`), and a refund the source bank returns waits for an operator the
   * same way, its money back in the customer's funds.
   */
  async function refundToSource(finalState: 'refunded' | 'canceled', reason?: string) {
    show('Refunding to the source');
    await record({ step: 'refund_submitted' });
    // A cancellation in review answers once its refund is under way.
    settledCancel = true;
    let attempt = 1;
    for (;;) {
      // The first attempt's inputs are those of the releases before retries existed (replay).
      const nth = attempt > 1 ? { attempt } : {};
      const outcome = await sendPayment('refund', nth);
      if (outcome.settled) {
        await record({ step: 'refunded', finalState, reason, ...nth });
        show(finalState === 'canceled' ? `Canceled and refunded: ${reason}` : 'Refunded to the source');
        // Histories from before refunds were watched end here.
        const windowMs = input.refundReturnWindowMs ?? 0;
        if (!outcome.railPaymentId || windowMs <= 0 || !patched('watch-refund-returns')) return;
        show(`${status.step}; inside the source bank's return window`);
        const refundId = outcome.railPaymentId;
        const code = await waitOutReturnWindow(refundId, windowMs, outcome.returnsAt, () => refundReturnCode ?? returnedPayments.get(refundId));
        if (!code) {
          show(finalState === 'canceled' ? `Canceled and refunded: ${reason}; the return window has closed` : 'Refunded; the return window has closed');
          return;
        }
        await record({ step: 'refund_returned', ...nth, code, reason: `returned by the source bank (${code})` });
        show(`Refund returned by the source bank (${code}). Waiting for an operator to retry it`);
      } else {
        await record({ step: 'refund_rejected', ...nth, reason: outcome.reason, code: outcome.code });
        show(`Refund rejected: ${outcome.reason}. Waiting for an operator to retry it`);
      }
      refundRejected = true;
      await condition(() => refundRetry !== undefined);
      attempt += 1;
      // Who asked for it stays in this workflow's history (the update's input).
      const { destination } = refundRetry!;
      await record({ step: 'refund_submitted', attempt, ...(destination ? { destination } : {}) });
      refundRetry = undefined;
      refundReturnCode = undefined;
      refundRejected = false;
      show(`Refunding to the source (attempt ${attempt})`);
    }
  }

  /**
   * One payment the workflow sends, the payout or an attempt of the refund, to its end: settled (on a
   * rail: which payment, for its return window; on a chain: the transaction and its fee), or why the
   * receiving (payout) or source (refund) bank or the chain refused it.
   */
  async function sendPayment(kind: 'payout' | 'refund', nth: { attempt?: number } = {}): Promise<SentPayment> {
    const onChain = kind === 'payout' ? input.destinationIsChain : input.sourceIsChain;
    if (onChain) {
      try {
        await chainSend.sendChainPayment({ transferId: input.transferId, kind, ...nth });
      } catch (err) {
        const refusal = chainRefusal(err);
        if (refusal) return { settled: false, reason: `the chain refused the ${kind}: ${refusal}` };
        throw err;
      }
      const final = await chains.awaitChainPayment({ transferId: input.transferId, kind, ...nth });
      if (final.status === 'failed') return { settled: false, reason: final.reason };
      if (final.status !== 'confirmed') throw new Error('unreachable: awaitChainPayment returns final states only');
      return { settled: true, txHash: final.txHash, networkFee: `${final.networkFee} (smallest unit of ${final.nativeAsset})` };
    }
    const sent = kind === 'payout'
      ? await rails.submitRailPayout({ transferId: input.transferId })
      : await rails.submitRailRefund({ transferId: input.transferId, ...nth });
    const payment = await untilSettled(sent);
    if (payment.status === 'rejected') {
      return { settled: false, reason: `rejected by the ${kind === 'payout' ? 'receiving' : 'source'} bank (${payment.code})`, code: payment.code };
    }
    return { settled: true, railPaymentId: sent.railPaymentId, returnsAt: payment.returnsAt };
  }
}
