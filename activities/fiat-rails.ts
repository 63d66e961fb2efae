import { ApplicationFailure } from '@temporalio/activity';
import type { Db } from '../src/db';
import type { FiatRail } from '../src/domain/rails';
import { RailUnavailableError, type RailAdapter } from '../src/providers/rails';
import { loadTransfer, paymentLeg } from '../src/transfers/transfer';
import { paymentDestination, paymentKey, strayDepositKeyOf, type TransferDatabaseActivities } from './transfers-database';
import { FAILURE } from '../src/temporal/failures';

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
        throw ApplicationFailure.retryable(err.message, FAILURE.RailUnavailable);
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

    /**
     * Sends a stray fiat deposit back through the provider (`reference`: the inbound payment), once per
     * attempt: an operator's release of a return the sender's bank rejected is a new payment.
     */
    async submitRailDepositReturn(input: { returnKey: string }) {
      const payment = await deps.db.selectFrom('payments').selectAll().where('idempotency_key', '=', input.returnKey).executeTakeFirstOrThrow();
      const stray = await deps.db.selectFrom('payments').select('provider_payment_id')
        .where('idempotency_key', '=', strayDepositKeyOf(input.returnKey)).executeTakeFirstOrThrow();
      const releases = payment.operator_releases?.length ?? 0;
      try {
        const sent = await deps.rails.submitPayment({
          tenant: { developerId: payment.developer_id, environment: payment.environment },
          idempotencyKey: releases === 0 ? input.returnKey : `${input.returnKey}:release:${releases}`,
          rail: payment.rail as FiatRail,
          direction: 'credit',
          amountMinor: BigInt(payment.amount_minor),
          currency: payment.currency,
          reference: stray.provider_payment_id!,
          purpose: 'deposit_return',
        });
        await deps.db.updateTable('payments').set((eb) => ({
          status: 'submitted', provider_payment_id: sent.id, settles_at: sent.settlesAt, failure_reason: null, attempts: eb('attempts', '+', 1), updated_at: new Date(),
        })).where('id', '=', payment.id).where('status', '=', 'pending').execute();
        return { railPaymentId: sent.id, ...(await status(sent.id)) };
      } catch (err) {
        if (err instanceof RailUnavailableError) {
          await deps.db.updateTable('payments').set({ failure_reason: err.message, updated_at: new Date() }).where('id', '=', payment.id).execute();
          throw ApplicationFailure.retryable(err.message, FAILURE.RailUnavailable);
        }
        throw err;
      }
    },

    async railPaymentStatus(input: { railPaymentId: string }) {
      return status(input.railPaymentId);
    },
  };
}

export type FiatRailActivities = ReturnType<typeof createFiatRailActivities>;
