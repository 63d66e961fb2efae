import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../src/db';
import type { FiatRail } from '../src/domain/rails';
import { RailUnavailableError, type RailAdapter } from '../src/providers/rails';
import { loadTransfer, paymentLeg } from '../src/resources/transfers/repository';
import { paymentDestination, paymentKey, type TransferDatabaseActivities } from './transfers-database';

/**
 * Activities that move a transfer's money on fiat rails (the sandbox simulators or a provider).
 * Every call carries the payment's idempotency key: a retry after a crash is the same payment.
 */
export function createFiatRailActivities(deps: { db: Db; rails: RailAdapter; records: TransferDatabaseActivities }) {
  async function status(railPaymentId: string) {
    const p = await deps.rails.getPayment(railPaymentId);
    return { status: p.status, code: p.code, returnsAt: p.returnsAt?.getTime(), settlesAt: p.settlesAt.getTime() };
  }

  async function submit(transferId: string, kind: 'payout' | 'refund', attempt = 1) {
    const row = await loadTransfer(deps.db, transferId);
    const leg = paymentLeg(row, kind);
    const to = await paymentDestination(deps.db, transferId, kind, attempt);
    try {
      const payment = await deps.rails.submitPayment({
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
      await deps.records.recordPaymentSent({ transferId, kind, attempt, providerPaymentId: payment.id, settlesAt: payment.settlesAt.getTime() });
      // Instant rails may have settled already: the workflow then needs no timer and no second call.
      return { railPaymentId: payment.id, ...(await status(payment.id)) };
    } catch (err) {
      if (err instanceof RailUnavailableError) {
        await deps.records.recordPaymentFailure({ transferId, kind, attempt, reason: err.message });
        throw ApplicationFailure.retryable(err.message, 'RailUnavailable');
      }
      throw err;
    }
  }

  return {
    /** Sends the final amount to the destination account. */
    async submitRailPayout(input: { transferId: string }) {
      return submit(input.transferId, 'payout');
    },

    /** Sends the whole amount back to the account the deposit came from (`attempt` > 1: an operator's retry). */
    async submitRailRefund(input: { transferId: string; attempt?: number }) {
      return submit(input.transferId, 'refund', input.attempt);
    },

    async railPaymentStatus(input: { railPaymentId: string }) {
      return status(input.railPaymentId);
    },
  };
}

export type FiatRailActivities = ReturnType<typeof createFiatRailActivities>;
