import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import { PayoutRejectedError } from '../src/chains/chain-adapter';
import type { Db } from '../src/db';
import type { ChainRail } from '../src/domain/rails';
import { loadTransfer, paymentLeg } from '../src/resources/transfers/repository';
import { paymentDestination, paymentKey, type TransferDatabaseActivities } from './transfers-database';

/** Activities that watch and move a transfer's money on chains (EVM over JSON-RPC, or the simulators). */
export function createChainActivities(deps: { db: Db; chains: ChainAdapters; records: TransferDatabaseActivities; pollMs: number }) {
  return {
    /**
     * Watches the deposit address for the quoted amount, heartbeating, for up to `maxWaitMs`. Returns
     * the deposit, or none and the position reached, where the workflow's next period starts (a
     * retried attempt resumes from its heartbeat), so no block is read twice and none is skipped.
     */
    async watchChainDeposit(input: { transferId: string; maxWaitMs: number; fromPosition?: string }) {
      const row = await loadTransfer(deps.db, input.transferId);
      const chain = deps.chains[row.source_rail as ChainRail];
      const until = Date.now() + input.maxWaitMs;
      let position: string = Context.current().info.heartbeatDetails ?? input.fromPosition ?? row.source_position!;
      for (;;) {
        const scan = await chain.findDeposit({ currency: row.source_currency, address: row.deposit_address!, fromPosition: position, amountMinor: BigInt(row.amount_minor) });
        if (scan.unmatched.length > 0) await deps.records.recordUnmatchedDeposits({ transferId: row.id, deposits: scan.unmatched, stillWaiting: !scan.deposit });
        if (scan.deposit) return { deposit: { txHash: scan.deposit.txHash, from: scan.deposit.from, confirmations: scan.deposit.confirmations }, position };
        position = scan.nextPosition;
        if (Date.now() >= until) return { deposit: null, position };
        Context.current().heartbeat(position);
        // Behind the chain (a bounded range per look): read on at once.
        if (scan.caughtUp) await sleep(deps.pollMs);
      }
    },

    /** Signs, records and broadcasts the payout (or the refund to from_address); a retry re-sends the same transaction. */
    async sendChainPayment(input: { transferId: string; kind: 'payout' | 'refund'; attempt?: number }) {
      const row = await loadTransfer(deps.db, input.transferId);
      const leg = paymentLeg(row, input.kind);
      const { to_address: to } = await paymentDestination(deps.db, row.id, input.kind, input.attempt);
      try {
        const { txHash } = await deps.chains[leg.rail as ChainRail].sendPayout({
          idempotencyKey: paymentKey(row.id, input.kind, input.attempt), currency: leg.currency, to: to!, amountMinor: leg.amountMinor,
        });
        await deps.records.recordPaymentSent({ transferId: row.id, kind: input.kind, attempt: input.attempt, txHash });
        return { txHash };
      } catch (err) {
        if (err instanceof PayoutRejectedError) throw ApplicationFailure.nonRetryable(err.message, 'PayoutRejected');
        await deps.records.recordPaymentFailure({ transferId: row.id, kind: input.kind, attempt: input.attempt, reason: String((err as Error).message).slice(0, 300) });
        throw err;
      }
    },

    /**
     * Moves the transfer's deposit from its deposit address into the treasury that pays payouts and
     * refunds (on EVM chains: the treasury's gas, then the token transfer), heartbeating until it is final.
     */
    async sweepChainDeposit(input: { transferId: string }) {
      const row = await loadTransfer(deps.db, input.transferId);
      // Transfers created before sweeps existed did not keep their address's index: operators sweep those.
      if (row.deposit_index === null) return { swept: false, txHash: null };
      const chain = deps.chains[row.source_rail as ChainRail];
      for (;;) {
        const sweep = await chain.sweepDeposit({
          transferId: row.id, depositIndex: Number(row.deposit_index), currency: row.source_currency, amountMinor: BigInt(row.amount_minor),
        });
        if (sweep.status === 'swept') return { swept: true, txHash: sweep.txHash };
        Context.current().heartbeat();
        await sleep(deps.pollMs);
      }
    },

    /** Waits (heartbeating) until the payment is final on chain: confirmed with its fee, or failed. */
    async awaitChainPayment(input: { transferId: string; kind: 'payout' | 'refund'; attempt?: number }) {
      const row = await loadTransfer(deps.db, input.transferId);
      const chain = deps.chains[paymentLeg(row, input.kind).rail as ChainRail];
      for (;;) {
        const status = await chain.payoutStatus(paymentKey(row.id, input.kind, input.attempt));
        if (status.status !== 'pending') return status;
        Context.current().heartbeat();
        await sleep(deps.pollMs);
      }
    },
  };
}

export type ChainActivities = ReturnType<typeof createChainActivities>;
