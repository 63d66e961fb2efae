import type { Db } from '../src/db';
import type { FiatRail } from '../src/domain/rails';
import { RailUnavailableError, type RailAdapter, type RailPayment } from '../src/providers/rails';
import type { TransferRow, TransferState } from '../src/db/schema';
import { paymentKey, releaseSuffix, strayDepositKeyOf } from '../src/payments/keys';
import { markPaymentSubmitted, notePaymentAttemptFailed, paymentDestination, requirePayment } from '../src/payments/store';
import { recordPaymentFailure, recordPaymentSent } from '../src/transfers/payment-attempts';
import { recordPayoutSettledAtOnce, recordTransferSteps } from '../src/transfers/steps';
import { loadTransfer, paymentLeg } from '../src/transfers/transfer';

type FiatRailDeps = { db: Db; rails: RailAdapter };

const statusOf = (p: RailPayment) => ({ status: p.status, code: p.code, returnsAt: p.returnsAt?.getTime(), settlesAt: p.settlesAt.getTime() });
/** A rail payout as the activity that sent it answers: the provider's payment and its status then. */
export type RailPayoutSent = { railPaymentId: string } & ReturnType<typeof statusOf>;

const sentOf = (payment: RailPayment) => ({ providerPaymentId: payment.id, settlesAt: payment.settlesAt });

/**
 * Sends the payment to the rail and answers it; the caller records it sent. `loaded`: the transfer
 * as the same activity just recorded it (no need to read it again).
 */
async function send(deps: FiatRailDeps, transferId: string, kind: 'payout' | 'refund', attempt = 1, loaded?: TransferRow): Promise<RailPayment> {
  const row = loaded ?? await loadTransfer(deps.db, transferId);
  const leg = paymentLeg(row, kind);
  // A payout goes where the transfer quoted; a refund attempt may go where an operator chose.
  const to = kind === 'payout' ? { external_account_id: leg.externalAccountId } : await paymentDestination(deps.db, transferId, kind, attempt);
  try {
    return await deps.rails.submitPayment({
      tenant: { developerId: row.developer_id, environment: row.environment },
      idempotencyKey: paymentKey(transferId, kind, attempt),
      rail: leg.rail as FiatRail,
      direction: 'credit',
      amountMinor: leg.amountMinor,
      currency: leg.currency,
      externalAccountId: to.external_account_id ?? undefined,
      reference: transferId,
      purpose: kind,
    });
  } catch (err) {
    if (err instanceof RailUnavailableError) await recordPaymentFailure(deps.db, { transferId, kind, attempt }, err.message);
    throw err;
  }
}

/**
 * Sends the payout of a transfer the same activity has just recorded in payment_submitted
 * (`recorded`: its row as written), and records it sent; one that settled at once (an instant rail)
 * is recorded payment_processed on that row, in one statement. Its payment's idempotency key makes a
 * retry the same payment.
 */
export async function sendRecordedRailPayout(deps: FiatRailDeps, recorded: TransferRow): Promise<RailPayoutSent & { state: TransferState }> {
  const payment = await send(deps, recorded.id, 'payout', 1, recorded);
  let { state } = recorded;
  if (payment.status === 'settled') {
    ({ state } = await recordPayoutSettledAtOnce(deps.db, recorded, sentOf(payment)));
  } else {
    await recordPaymentSent(deps.db, { transferId: recorded.id, kind: 'payout' }, sentOf(payment));
  }
  return { state, railPaymentId: payment.id, ...statusOf(payment) };
}

/**
 * Activities that move a transfer's money on fiat rails (the sandbox simulators or a provider).
 * Every call carries the payment's idempotency key: a retry after a crash is the same payment.
 */
export function createFiatRailActivities(deps: FiatRailDeps) {
  async function status(railPaymentId: string) {
    return statusOf(await deps.rails.getPayment(railPaymentId));
  }

  async function submit(transferId: string, kind: 'payout' | 'refund', attempt = 1) {
    const payment = await send(deps, transferId, kind, attempt);
    await recordPaymentSent(deps.db, { transferId, kind, attempt }, sentOf(payment));
    // Instant rails may have settled already: the workflow then needs no timer and no second call.
    return { railPaymentId: payment.id, ...statusOf(payment) };
  }

  return {
    /** Sends the final amount to the destination account. */
    async submitRailPayout(input: { transferId: string }) {
      return submit(input.transferId, 'payout');
    },

    /**
     * Records payment_submitted (the payout payment, its ledger legs) and sends the payout, in one
     * local activity: a retry records nothing twice and sends the same payment (its idempotency key).
     */
    async recordAndSubmitRailPayout(input: { transferId: string }) {
      const { transfer } = await recordTransferSteps(deps.db, input.transferId, [{ step: 'payment_submitted' }]);
      return sendRecordedRailPayout(deps, transfer);
    },

    /** Sends the whole amount back to the account the deposit came from (`attempt` > 1: an operator's retry). */
    async submitRailRefund(input: { transferId: string; attempt?: number }) {
      return submit(input.transferId, 'refund', input.attempt);
    },

    /**
     * Sends a stray fiat deposit back through the provider (`reference`: the inbound payment), once per
     * attempt: an operator's release of a return the sender's bank rejected is a new payment.
     */
    async submitRailDepositReturn(input: { returnKey: string }) {
      const payment = await requirePayment(deps.db, { key: input.returnKey });
      const stray = await requirePayment(deps.db, { key: strayDepositKeyOf(input.returnKey) });
      try {
        const sent = await deps.rails.submitPayment({
          tenant: { developerId: payment.developer_id, environment: payment.environment },
          idempotencyKey: `${input.returnKey}${releaseSuffix(payment)}`,
          rail: payment.rail as FiatRail,
          direction: 'credit',
          amountMinor: BigInt(payment.amount_minor),
          currency: payment.currency,
          reference: stray.provider_payment_id!,
          purpose: 'deposit_return',
        });
        await markPaymentSubmitted(deps.db, { id: payment.id }, { providerPaymentId: sent.id, settlesAt: sent.settlesAt });
        return { railPaymentId: sent.id, ...(await status(sent.id)) };
      } catch (err) {
        if (err instanceof RailUnavailableError) await notePaymentAttemptFailed(deps.db, { id: payment.id }, err.message, { countAttempt: false });
        throw err;
      }
    },

    async railPaymentStatus(input: { railPaymentId: string }) {
      return status(input.railPaymentId);
    },
  };
}

export type FiatRailActivities = ReturnType<typeof createFiatRailActivities>;
