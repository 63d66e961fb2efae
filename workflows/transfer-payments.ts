import { condition, patched } from '@temporalio/workflow';
import { chainRefusal, chainSend, chains } from './chain-activities';
import { rails, untilSettled, type RailPayoutSent } from './rail-activities';
import type { TransferRun } from './transfer-run';

/** How a payment the workflow sent ended (sendPayment). */
export type SentPayment =
  | { settled: true; txHash?: string; networkFee?: string; railPaymentId?: string; returnsAt?: number }
  | { settled: false; reason: string; code?: string };

/**
 * One payment the workflow sends, the payout or an attempt of the refund, to its end: settled (on a
 * rail: which payment, for its return window; on a chain: the transaction and its fee), or why the
 * receiving (payout) or source (refund) bank or the chain refused it.
 */
export async function sendPayment(
  run: TransferRun, kind: 'payout' | 'refund', nth: { attempt?: number } = {}, opts: { recordWithRailPayout?: boolean; sent?: RailPayoutSent } = {},
): Promise<SentPayment> {
  const { input } = run;
  // A platform account is paid in the ledger, by the step that records the payment: nothing to send.
  if (kind === 'payout' ? input.destinationIsAccount : input.sourceIsAccount) return { settled: true };
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
  const sent = kind === 'refund' ? await rails.submitRailRefund({ transferId: input.transferId, ...nth })
    : opts.sent ?? (opts.recordWithRailPayout ? await recordAndSubmitRailPayout(run) : await rails.submitRailPayout({ transferId: input.transferId }));
  const payment = await untilSettled(sent);
  if (payment.status === 'rejected') {
    return { settled: false, reason: `rejected by the ${kind === 'payout' ? 'receiving' : 'source'} bank (${payment.code})`, code: payment.code };
  }
  return { settled: true, railPaymentId: sent.railPaymentId, returnsAt: payment.returnsAt };
}

/** Records payment_submitted and sends the rail payout in one local activity. */
async function recordAndSubmitRailPayout(run: TransferRun) {
  const { state, ...sent } = await rails.recordAndSubmitRailPayout({ transferId: run.input.transferId });
  run.follow(state);
  return sent;
}

/**
 * Waits until `windowMs` has passed or the rail payment came back (a signal, or its status when the
 * sandbox's decided return is due and when the window closes); the return code, if it came back.
 */
export async function waitOutReturnWindow(
  run: TransferRun, kind: 'payout' | 'refund', railPaymentId: string, windowMs: number, returnsAt: number | undefined,
): Promise<string | undefined> {
  const signaled = () => run.returnOf(railPaymentId, kind);
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
export async function refundToSource(run: TransferRun, finalState: 'refunded' | 'canceled', reason?: string) {
  run.show('Refunding to the source');
  await run.record({ step: 'refund_submitted' });
  // A cancellation in review answers once its refund is under way.
  run.settledCancel = true;
  for (let attempt = 1; ; ) {
    // The first attempt's inputs are those of the releases before retries existed (replay).
    const nth = attempt > 1 ? { attempt } : {};
    const outcome = await sendPayment(run, 'refund', nth);
    if (outcome.settled) {
      await run.record({ step: 'refunded', finalState, reason, ...nth });
      const done = finalState === 'canceled' ? `Canceled and refunded: ${reason}` : 'Refunded';
      run.show(finalState === 'canceled' ? done : 'Refunded to the source');
      const code = await watchRefundReturnWindow(run, outcome, done);
      if (!code) return;
      await run.record({ step: 'refund_returned', ...nth, code, reason: `returned by the source bank (${code})` });
      run.show(`Refund returned by the source bank (${code}). Waiting for an operator to retry it`);
    } else {
      await run.record({ step: 'refund_rejected', ...nth, reason: outcome.reason, code: outcome.code });
      run.show(`Refund rejected: ${outcome.reason}. Waiting for an operator to retry it`);
    }
    attempt = await waitForRefundRetry(run, attempt);
  }
}

/** A settled fiat refund through the source rail's return window: the return code, if the source bank sent it back. */
async function watchRefundReturnWindow(run: TransferRun, refund: Extract<SentPayment, { settled: true }>, done: string): Promise<string | undefined> {
  // Histories from before refunds were watched end here.
  const windowMs = run.input.refundReturnWindowMs ?? 0;
  if (!refund.railPaymentId || windowMs <= 0 || !patched('watch-refund-returns')) return undefined;
  run.show(`${run.status.step}; inside the source bank's return window`);
  const code = await waitOutReturnWindow(run, 'refund', refund.railPaymentId, windowMs, refund.returnsAt);
  if (!code) run.show(`${done}; the return window has closed`);
  return code;
}

/** Waits for an operator to retry a rejected or returned refund; records the new attempt and answers its number. */
async function waitForRefundRetry(run: TransferRun, attempt: number): Promise<number> {
  run.refundRejected = true;
  await condition(() => run.refundRetry !== undefined);
  const next = attempt + 1;
  // Who asked for it stays in this workflow's history (the update's input).
  const { destination } = run.refundRetry!;
  await run.record({ step: 'refund_submitted', attempt: next, ...(destination ? { destination } : {}) });
  run.refundRetry = undefined;
  run.refundReturnCode = undefined;
  run.refundRejected = false;
  run.show(`Refunding to the source (attempt ${next})`);
  return next;
}
