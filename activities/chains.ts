import { Context, sleep } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import { PayoutRejectedError, findDeposit } from '../src/chains/chain-adapter';
import type { Db } from '../src/db';
import type { ChainRail } from '../src/domain/rails';
import { paymentKey } from '../src/payments/keys';
import { markPaymentSubmitted, paymentDestination, requirePayment } from '../src/payments/store';
import { recordPaymentFailure, recordPaymentSent } from '../src/transfers/payment-attempts';
import { scanStrayChainDeposits } from '../src/transfers/stray-chain-scan';
import { recordStrayChainDeposits } from '../src/transfers/stray-deposits';
import { loadTransfer, paymentLeg } from '../src/transfers/transfer';
import { sendFromSourceWallet } from '../src/transfers/wallet-legs';
import type { KeyVault } from '../src/keys/key-vault';

/** Activities that watch and move a transfer's money on chains (EVM over JSON-RPC, or the simulators). */
export function createChainActivities(deps: {
  db: Db; chains: ChainAdapters; pollMs: number; keys: KeyVault;
  /** How long after its creation a transfer's deposit address is still read for stray deposits. */
  strayDepositWatchMs: number;
}) {
  /** Waits (heartbeating) until the payment with this key is final on chain: confirmed with its fee, or failed. */
  async function untilFinal(chain: ChainAdapters[ChainRail], idempotencyKey: string) {
    for (;;) {
      const status = await chain.payoutStatus(idempotencyKey);
      if (status.status !== 'pending') return status;
      Context.current().heartbeat();
      await sleep(deps.pollMs);
    }
  }

  /** Sends a token payment from the treasury; a chain's refusal (a revert in simulation) is final. */
  function sendPayout(rail: string, request: Parameters<ChainAdapters[ChainRail]['sendPayout']>[0]) {
    return deps.chains[rail as ChainRail].sendPayout(request);
  }

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
        const scan = await findDeposit(chain, { currency: row.source_currency, address: row.deposit_address!, fromPosition: position, amountMinor: BigInt(row.amount_minor) });
        if (scan.unmatched.length > 0) await recordStrayChainDeposits(deps.db, row.id, scan.unmatched, !scan.deposit);
        if (scan.deposit) return { deposit: { txHash: scan.deposit.txHash, from: scan.deposit.from, confirmations: scan.deposit.confirmations }, position };
        position = scan.nextPosition;
        if (Date.now() >= until) return { deposit: null, position };
        Context.current().heartbeat(position);
        // Behind the chain (a bounded range per look): read on at once.
        if (scan.caughtUp) await sleep(deps.pollMs);
      }
    },

    /** Sends the deposit from the transfer's source wallet, signed with the wallet's key (opened only here); a retry re-sends the same transaction. */
    async sendFromSourceWallet(input: { transferId: string }): Promise<{ txHash: string }> {
      return sendFromSourceWallet(deps, input.transferId);
    },

    /** Signs, records and broadcasts the payout (or the refund to from_address); a retry re-sends the same transaction. */
    async sendChainPayment(input: { transferId: string; kind: 'payout' | 'refund'; attempt?: number }) {
      const row = await loadTransfer(deps.db, input.transferId);
      const leg = paymentLeg(row, input.kind);
      const { to_address: to } = await paymentDestination(deps.db, row.id, input.kind, input.attempt);
      try {
        const { txHash } = await sendPayout(leg.rail, {
          idempotencyKey: paymentKey(row.id, input.kind, input.attempt), currency: leg.currency, to: to!, amountMinor: leg.amountMinor,
        });
        await recordPaymentSent(deps.db, input, { txHash });
        return { txHash };
      } catch (err) {
        // A transient failure is noted on the payment; the chain's refusal is the workflow's to record.
        if (!(err instanceof PayoutRejectedError)) await recordPaymentFailure(deps.db, input, String((err as Error).message).slice(0, 300));
        throw err;
      }
    },

    /**
     * Moves the transfer's deposit from its deposit address into the treasury that pays payouts and
     * refunds (on EVM chains: the treasury's gas, then the token transfer), heartbeating until it is
     * final. With `strayDepositKey`, a stray deposit instead, on its way back to its sender.
     */
    async sweepChainDeposit(input: { transferId: string; strayDepositKey?: string }) {
      const row = await loadTransfer(deps.db, input.transferId);
      // Transfers created before sweeps existed did not keep their address's index: operators sweep those.
      if (row.deposit_index === null) return { swept: false, txHash: null };
      const chain = deps.chains[row.source_rail as ChainRail];
      const amountMinor = BigInt(input.strayDepositKey ? (await requirePayment(deps.db, { key: input.strayDepositKey })).amount_minor : row.amount_minor);
      for (;;) {
        const sweep = await chain.sweepDeposit({
          sweepKey: input.strayDepositKey ?? row.id, transferId: row.id, depositIndex: Number(row.deposit_index), currency: row.source_currency, amountMinor,
        });
        if (sweep.status === 'swept') return { swept: true, txHash: sweep.txHash };
        Context.current().heartbeat();
        await sleep(deps.pollMs);
      }
    },

    /** Lists stray token transfers to the addresses of transfers that stopped waiting; answers the transfers whose strays can go back now. */
    async scanStrayChainDeposits(): Promise<{ found: number; transfersToReturn: string[] }> {
      return scanStrayChainDeposits(deps, deps.strayDepositWatchMs, () => Context.current().heartbeat());
    },

    /** Signs, records and broadcasts a stray deposit's return to its sender from the treasury; a retry re-sends the same transaction. */
    async sendStrayDepositReturn(input: { returnKey: string }) {
      const payment = await requirePayment(deps.db, { key: input.returnKey });
      const { txHash } = await sendPayout(payment.rail, {
        idempotencyKey: input.returnKey, currency: payment.currency, to: payment.to_address!, amountMinor: BigInt(payment.amount_minor),
      });
      await markPaymentSubmitted(deps.db, { key: input.returnKey }, { txHash });
      return { txHash };
    },

    /** Waits (heartbeating) until a stray deposit's return is final on chain. */
    async awaitStrayDepositReturn(input: { returnKey: string }) {
      const payment = await requirePayment(deps.db, { key: input.returnKey });
      return untilFinal(deps.chains[payment.rail as ChainRail], input.returnKey);
    },

    /** Waits (heartbeating) until the payment is final on chain: confirmed with its fee, or failed. */
    async awaitChainPayment(input: { transferId: string; kind: 'payout' | 'refund'; attempt?: number }) {
      const row = await loadTransfer(deps.db, input.transferId);
      return untilFinal(deps.chains[paymentLeg(row, input.kind).rail as ChainRail], paymentKey(row.id, input.kind, input.attempt));
    },
  };
}

export type ChainActivities = ReturnType<typeof createChainActivities>;
