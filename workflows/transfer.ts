import {
  CancellationScope, ChildWorkflowCancellationType, condition, executeChild, isCancellation, ParentClosePolicy, patched, proxyActivities, proxyLocalActivities, workflowInfo,
} from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chains';
import type { TransferReviewActivities } from '../activities/transfer-review';
import { chainWatchTaskQueue } from '../src/temporal/task-queues';
import { chainRefusal, chainRetry, chainSend, chains } from './chain-activities';
import type { TransferStatus, TransferWorkflowInput } from './transfer-messages';
import { refundToSource, sendPayment, waitOutReturnWindow } from './transfer-payments';
import { TransferRun } from './transfer-run';
import type { MpcActivities } from '../activities/mpc';
import { mpcSessionWorkflow } from './mpc-session';
import { mpcSessionWorkflowId } from './mpc-messages';

// The review is a short call (in-memory screening and a few queries): a local activity, like the
// rail calls (workflows/rail-activities.ts).
const review = proxyLocalActivities<TransferReviewActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

// Preparing an MPC wallet's transaction reads the chain and takes a nonce: retried like a chain send.
const mpcSigning = proxyActivities<MpcActivities>({ startToCloseTimeout: '30 seconds', retry: chainRetry });

/**
 * `transfer:{id}`: awaiting_funds → funds_received → in_review → payment_submitted →
 * payment_processed, with the branches of docs/TRANSFERS.md: cancel (before the payout; received
 * funds go back), undeliverable → returned → refunded, and returned → refunded inside the return
 * window. Each move is one database transaction (state, payments, ledger, events). Once money is
 * held, the rest runs in a non-cancellable scope: compensation always finishes. Its messages and
 * state are in transfer-run.ts; payments, refunds and return windows in transfer-payments.ts. Its
 * result is the final state (the step and hold reasons are in its current details and events).
 */
export async function transferWorkflow(input: TransferWorkflowInput): Promise<Pick<TransferStatus, 'state'>> {
  const run = new TransferRun(input);
  run.listen();
  run.show('Waiting for the deposit');
  try {
    await waitForFunds(run);
  } catch (err) {
    // Cancelling the workflow before any money arrived cancels the transfer.
    if (!isCancellation(err)) throw err;
    run.cancelReason ??= 'workflow_canceled';
  }
  // Decided in the same breath as the wait ends: from here on every offer finds a deposit or a reason.
  if (!run.deposit && !run.cancelReason) run.cancelReason = 'deposit_expired';
  if (run.cancelReason && !run.deposit) {
    await CancellationScope.nonCancellable(() => run.record({ step: 'canceled', reason: run.cancelReason! }));
    run.settledCancel = true;
    run.show(`Canceled: ${run.cancelReason}`);
    return { state: run.status.state };
  }

  const { sweep } = await receiveAndReview(run, input);
  if (run.status.holdReasons.length > 0 && !run.cancelReason) {
    run.onHold = true;
    run.show('On hold: waiting for an operator decision');
    await recordReviewDecision(run);
    run.onHold = false;
    if (run.decision && !run.decision.approve) run.cancelReason ??= `rejected_in_review${run.decision.note ? `: ${run.decision.note}` : ''}`;
  }

  // From here on money moves: nothing, not even cancelling the workflow, stops it half-way.
  await CancellationScope.nonCancellable(() => (run.cancelReason ? refundToSource(run, 'canceled', run.cancelReason)
    : run.undeliverable ? refundUndeliverable(run, run.undeliverable) : payOut(run)));
  // Started in a non-cancellable scope: cancelling the workflow does not stop it.
  if (sweep) await sweep;
  return { state: run.status.state };
}

/**
 * The deposit is in: funds_received, the review (screening and limits) and a hold for its reasons, as
 * one piece nothing cancels. A chain deposit's sweep into the treasury starts on the way; its promise
 * is handed back, for the workflow to end only once it has.
 */
async function receiveAndReview(run: TransferRun, input: TransferWorkflowInput): Promise<{ sweep?: Promise<unknown> }> {
  let sweep: Promise<unknown> | undefined;
  await CancellationScope.nonCancellable(async () => {
    // A chain deposit moves from its one-transfer address into the treasury while the transfer goes
    // on; the workflow ends once it has. Histories from before sweeps existed replay without it.
    const startSweep = () => {
      if (!input.sourceIsChain || !patched('sweep-chain-deposits')) return;
      sweep = chains.sweepChainDeposit({ transferId: input.transferId });
      sweep.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    };
    let reasons: string[];
    let undeliverable: TransferRun['undeliverable'];
    if (paysOutWithReview(run) && patched('review-and-pay-out')) {
      // Bank rail to bank rail: the review, funds_received to payment_submitted and the payout in
      // one local activity. No cancel is taken meanwhile: the payout may be on its way.
      run.show('Funds received: screening, limits and the payout');
      run.payoutStarted = true;
      const done = await review.receiveReviewAndPayOut({ transferId: input.transferId, deposit: run.deposit! });
      run.follow(done.state);
      ({ reasons, undeliverable } = done);
      if (done.payout) run.sentPayout = done.payout;
      else run.payoutStarted = false;
    } else if (patched('receive-and-review-at-once')) {
      // funds_received and in_review in one transaction, and the review, in one local activity.
      run.show('Funds received: screening and limits');
      const reviewed = await review.receiveDepositAndReview({ transferId: input.transferId, deposit: run.deposit ?? {} });
      run.follow(reviewed.state);
      startSweep();
      ({ reasons, undeliverable } = reviewed);
    } else {
      // Histories from before: each step its own activity.
      await run.record({ step: 'funds_received', ...run.deposit });
      startSweep();
      await run.record({ step: 'in_review' });
      run.show('Screening and limits');
      ({ reasons, undeliverable } = await review.reviewTransfer({ transferId: input.transferId }));
    }
    // The payee cannot be paid at all: no hold, nothing is sent (below).
    if (undeliverable && !run.cancelReason) run.undeliverable = undeliverable;
    else if (reasons.length > 0 && !run.cancelReason) {
      run.status.holdReasons = reasons;
      await run.record({ step: 'hold', reasons });
    }
  });
  // In an object: an async function returning the promise itself would wait for the sweep.
  return { sweep };
}

/**
 * The deposit of a transfer between bank rails, named by its payment at the provider (where its
 * sender is found for the review), and no cancel asked for: reviewed and paid out by one activity.
 */
function paysOutWithReview({ input, deposit, cancelReason }: TransferRun): boolean {
  const bankToBank = !input.sourceIsChain && !input.sourceIsAccount && !input.sourceWalletId && !input.destinationIsChain && !input.destinationIsAccount;
  return bankToBank && deposit?.railPaymentId !== undefined && cancelReason === undefined;
}

/** The review found the payee cannot be paid: undeliverable before anything was sent, then refunded (no return leg). */
async function refundUndeliverable(run: TransferRun, refusal: NonNullable<TransferRun['undeliverable']>) {
  run.payoutStarted = true; // no cancel from here: the refund is the outcome
  await run.record({ step: 'undeliverable', reason: refusal.reason, code: refusal.code });
  run.show(`Undeliverable: ${refusal.reason}. Refunding`);
  await refundToSource(run, 'refunded');
}

/** Pays out; an undeliverable payout, or one the receiving bank returns inside its window, is refunded to the source. */
async function payOut(run: TransferRun) {
  const { input } = run;
  run.payoutStarted = true;
  // A rail payout is recorded and sent by one local activity (sendPayment); histories from before
  // recorded it first.
  // Sent already by the review's activity (receiveAndReview), else recorded and sent here.
  const recordWithRailPayout = !run.sentPayout && !input.destinationIsChain && !input.destinationIsAccount && patched('record-with-rail-payout');
  if (!recordWithRailPayout && !run.sentPayout) await run.record({ step: 'payment_submitted' });
  run.show(`Paying out on ${input.destinationIsChain ? 'the chain' : 'the rail'}`);
  const outcome = await sendPayment(run, 'payout', {}, { recordWithRailPayout, sent: run.sentPayout });
  if (!outcome.settled) {
    await run.record({ step: 'undeliverable', reason: outcome.reason, code: outcome.code });
    run.show('Undeliverable: taking the funds back');
    await run.record({ step: 'returned', code: outcome.code });
    await refundToSource(run, 'refunded');
    return;
  }
  // A rail payout that settled at once was recorded processed by the activity that sent it.
  if (run.status.state !== 'payment_processed') await run.record({ step: 'payment_processed', txHash: outcome.txHash, networkFee: outcome.networkFee });
  if (input.destinationIsChain || input.returnWindowMs <= 0) {
    run.show('Delivered (final on chain)');
    return;
  }
  run.show('Delivered; inside the return window');
  const code = await waitOutReturnWindow(run, 'payout', outcome.railPaymentId!, input.returnWindowMs, outcome.returnsAt);
  if (code) {
    await run.record({ step: 'returned', code, reason: `returned by the receiving bank (${code})` });
    await refundToSource(run, 'refunded');
    return;
  }
  run.show('Delivered; the return window has closed');
}

/**
 * Waits for an operator's decision (or a cancellation) and records who released or refused the held
 * money before the decision takes effect. A decision whose data cannot be stored is refused (its
 * Update fails) and the transfer goes on waiting for another. Histories from before the record
 * existed replay without it.
 */
async function recordReviewDecision(run: TransferRun) {
  for (;;) {
    try {
      await condition(() => run.decision !== undefined || run.cancelReason !== undefined);
    } catch (err) {
      // Cancelling the workflow while it holds received funds cancels the transfer: they go back.
      if (!isCancellation(err)) throw err;
      run.cancelReason ??= 'workflow_canceled';
    }
    if (!run.decision || !patched('record-review-decision')) return;
    const d = run.decision;
    try {
      await CancellationScope.nonCancellable(() => run.record({ step: 'review_decided', approve: d.approve, note: d.note, operator: d.operator ?? 'unnamed' }));
      return;
    } catch (err) {
      if (!run.refusedDecisions.refuse(d, err)) throw err;
      run.decision = undefined;
    }
  }
}

/**
 * The platform sends the deposit from the source wallet (unless the transfer was canceled first); a
 * refusal by the chain (the wallet no longer holds enough) cancels the transfer. Once sent, the deposit
 * is on its way: the watch below finds it; a cancel that comes first leaves it a stray deposit, which
 * goes back to the wallet as every stray goes back to its sender.
 */
async function sendFromSourceWallet(run: TransferRun): Promise<boolean> {
  if (run.cancelReason) return false;
  run.show('Sending the deposit from the source wallet');
  try {
    await CancellationScope.nonCancellable(() => chainSend.sendFromSourceWallet({ transferId: run.input.transferId }));
    return true;
  } catch (err) {
    const refusal = chainRefusal(err);
    if (refusal === undefined) throw err;
    run.cancelReason ??= `wallet_send_refused: ${refusal}`;
    return false;
  }
}

/**
 * An MPC wallet's deposit is signed by the platform's share with the customer's: the transaction is
 * prepared (a refusal by the chain cancels the transfer) and a signing session opens as a child
 * workflow, which the customer's signer completes through the API. It expires after
 * `mpcSignatureExpiryMs` (the transfer is canceled); a cancel meanwhile ends it.
 */
async function signWithCustomer(run: TransferRun): Promise<boolean> {
  const { input } = run;
  if (run.cancelReason) return false;
  run.show('Preparing the transaction for the customer\'s signature');
  let sessionId: string;
  try {
    ({ sessionId } = await mpcSigning.openTransferSigning({ transferId: input.transferId, expiresInMs: input.mpcSignatureExpiryMs! }));
  } catch (err) {
    const refusal = chainRefusal(err);
    if (refusal === undefined) throw err;
    run.cancelReason ??= `wallet_send_refused: ${refusal}`;
    return false;
  }
  run.show('Waiting for the customer\'s signature');
  const signing = new CancellationScope();
  void condition(() => run.cancelReason !== undefined).then(() => signing.cancel(), () => undefined);
  try {
    const result = await signing.run(() => executeChild(mpcSessionWorkflow, {
      workflowId: mpcSessionWorkflowId(sessionId), args: [{ sessionId, kind: 'signing', expiresInMs: input.mpcSignatureExpiryMs! }],
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED, parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      staticSummary: `Signing of transfer ${input.transferId}'s deposit`,
    }));
    if (result.status === 'completed') return true;
    run.cancelReason ??= `signature_${result.status}: ${result.reason ?? ''}`;
    return false;
  } catch (err) {
    if (!run.cancelReason) throw err;
    // Canceled, perhaps before the session's workflow started: the session can no longer be signed.
    await CancellationScope.nonCancellable(() => mpcSigning.closeUnfinishedMpcSession({ sessionId, status: 'canceled', reason: 'canceled with its transfer' }));
    return false;
  }
}

/**
 * Waits for the deposit: a fiat one is offered by the rail's webhook (the `offerDeposit` Update); a
 * chain one is found by watching the chain in periods. A DELETE stops the current watching activity
 * at once; cancelling the workflow reaches it through the root scope, and also ends this wait for the
 * request (its rejection is handled here: an unhandled one would fail every workflow task from then
 * on). The watchers have a task queue of their own (src/temporal/task-queues.ts); a period lasts up
 * to `chainWatchMs`, so the history grows by one activity per period, not per look at the chain.
 */
async function waitForFunds(run: TransferRun) {
  const { input } = run;
  const expiresAt = Date.now() + input.depositExpiryMs;
  // A route's deposit arrived before its transfer existed: taken now (a cancel then refunds it).
  if (input.routeDeposit) {
    run.deposit = input.routeDeposit;
    if (input.routeDepositRefused) run.cancelReason ??= input.routeDepositRefused;
    return;
  }
  // Reserved in the account when the transfer was created: taken now, unless canceled first.
  if (input.sourceIsAccount) {
    if (!run.cancelReason) run.deposit = {};
    return;
  }
  if (!input.sourceIsChain) {
    const waitMs = input.startsOnDeposit ? workflowInfo().startTime.getTime() + input.depositExpiryMs - Date.now() : input.depositExpiryMs;
    if (waitMs > 0) await condition(() => run.deposit !== undefined || run.cancelReason !== undefined, waitMs);
    return;
  }
  if (input.sourceWalletIsMpc && !(await signWithCustomer(run))) return;
  if (input.sourceWalletId && !(await sendFromSourceWallet(run))) return;
  const watcher = proxyActivities<ChainActivities>({
    taskQueue: chainWatchTaskQueue(workflowInfo().taskQueue), startToCloseTimeout: '1 hour', heartbeatTimeout: '10 seconds', retry: chainRetry,
  });
  let watch: CancellationScope | undefined;
  let position: string | undefined;
  void condition(() => run.cancelReason !== undefined).then(() => watch?.cancel(), () => undefined);
  while (!run.deposit && !run.cancelReason && Date.now() < expiresAt) {
    watch = new CancellationScope();
    try {
      const result = await watch.run(() => watcher.watchChainDeposit({
        transferId: input.transferId, maxWaitMs: Math.min(input.chainWatchMs, expiresAt - Date.now()), fromPosition: position,
      }));
      position = result.position;
      if (result.deposit) run.deposit = { txHash: result.deposit.txHash, from: result.deposit.from };
    } catch (err) {
      if (!(isCancellation(err) && run.cancelReason)) throw err;
    }
  }
}
