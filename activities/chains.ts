import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import { ChainUnavailableError, PayoutRejectedError, findDeposit } from '../src/chains/chain-adapter';
import type { Db } from '../src/db';
import type { ChainRail } from '../src/domain/rails';
import { loadTransfer, paymentLeg } from '../src/transfers/transfer';
import { straysToReturn } from './stray-deposits';
import { paymentDestination, paymentKey, type TransferDatabaseActivities } from './transfers-database';
import { FAILURE } from '../src/temporal/failures';

/** Activities that watch and move a transfer's money on chains (EVM over JSON-RPC, or the simulators). */
export function createChainActivities(deps: {
  db: Db; chains: ChainAdapters; records: TransferDatabaseActivities; pollMs: number;
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
        if (err instanceof PayoutRejectedError) throw ApplicationFailure.nonRetryable(err.message, FAILURE.PayoutRejected);
        await deps.records.recordPaymentFailure({ transferId: row.id, kind: input.kind, attempt: input.attempt, reason: String((err as Error).message).slice(0, 300) });
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
      const amountMinor = input.strayDepositKey
        ? BigInt((await deps.db.selectFrom('payments').select('amount_minor').where('idempotency_key', '=', input.strayDepositKey).executeTakeFirstOrThrow()).amount_minor)
        : BigInt(row.amount_minor);
      for (;;) {
        const sweep = await chain.sweepDeposit({
          sweepKey: input.strayDepositKey ?? row.id, transferId: row.id, depositIndex: Number(row.deposit_index), currency: row.source_currency, amountMinor,
        });
        if (sweep.status === 'swept') return { swept: true, txHash: sweep.txHash };
        Context.current().heartbeat();
        await sleep(deps.pollMs);
      }
    },

    /**
     * Reads the deposit addresses of transfers that no longer wait for their deposit (funded, canceled
     * or expired, created within the watch period) for token transfers that arrived since, and lists
     * each as a stray deposit. Answers the transfers whose strays can go back now: their address is
     * no longer swept by their own workflow, so two sweeps never spend its nonces at once.
     */
    async scanStrayChainDeposits(): Promise<{ found: number; transfersToReturn: string[] }> {
      const since = new Date(Date.now() - deps.strayDepositWatchMs);
      let found = 0; // read this time (each is listed once, however often it is read)
      const watched = await deps.db.selectFrom('transfers')
        .select(['id', 'source_rail', 'source_currency', 'deposit_address', 'source_position', 'stray_scan_position'])
        .where('source_rail', 'in', Object.keys(deps.chains)).where('deposit_address', 'is not', null).where('source_position', 'is not', null)
        .where('state', '<>', 'awaiting_funds').where('created_at', '>=', since)
        .orderBy('id').execute();
      // One query per chain, currency and up to 200 addresses, from the earliest position among them
      // (the others re-read a few blocks, which records nothing twice), until the scan has caught up.
      const groups = new Map<string, typeof watched>();
      for (const t of watched) {
        const key = `${t.source_rail}|${t.source_currency}`;
        groups.set(key, [...(groups.get(key) ?? []), t]);
      }
      for (const [key, transfers] of groups) {
        const [rail, currency] = key.split('|') as [ChainRail, string];
        for (let i = 0; i < transfers.length; i += 200) {
          const batch = transfers.slice(i, i + 200);
          let position = batch.map((t) => t.stray_scan_position ?? t.source_position!).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
          const deposits = await deps.db.selectFrom('payments').select(['transfer_id', 'tx_hash'])
            .where('transfer_id', 'in', batch.map((t) => t.id)).where('kind', '=', 'deposit').where('status', '=', 'settled').execute();
          for (let reads = 0; reads < 20; reads++) {
            const scan = await deps.chains[rail].findTransfersTo({ currency, addresses: batch.map((t) => t.deposit_address!), fromPosition: position })
              .catch((err: Error) => {
                // A chain no longer configured here (no RPC address): the others are still read.
                if (err instanceof ChainUnavailableError) return null;
                throw err;
              });
            if (!scan) break;
            for (const t of batch) {
              const own = deposits.find((d) => d.transfer_id === t.id)?.tx_hash?.toLowerCase();
              const strays = scan.transfers.filter((x) => x.to.toLowerCase() === t.deposit_address!.toLowerCase() && x.txHash.toLowerCase() !== own);
              if (strays.length > 0) await deps.records.recordUnmatchedDeposits({ transferId: t.id, deposits: strays, stillWaiting: false });
              found += strays.length;
            }
            position = scan.nextPosition;
            Context.current().heartbeat();
            if (scan.caughtUp) break;
          }
          await deps.db.updateTable('transfers').set({ stray_scan_position: position }).where('id', 'in', batch.map((t) => t.id)).execute();
        }
      }

      const candidates = await straysToReturn(deps.db).innerJoin('transfers as t', 't.id', 'd.transfer_id')
        .leftJoin('chain_sweeps as s', 's.sweep_key', 't.id')
        .leftJoin('payments as own', (join) => join.onRef('own.transfer_id', '=', 't.id').on('own.kind', '=', 'deposit').on('own.status', '=', 'settled'))
        .select(['t.id', 't.source_rail', 's.status as sweep_status', 'own.id as own_deposit'])
        .distinct()
        // Chain strays only: a fiat stray goes back through its own workflow (rail-deposit-return.ts).
        .where('t.state', '<>', 'awaiting_funds').where('t.deposit_index', 'is not', null).where('t.source_rail', 'in', Object.keys(deps.chains))
        .execute();
      // A funded transfer's own deposit leaves the address first (its workflow sweeps it).
      const transfersToReturn = candidates
        .filter((c) => !deps.chains[c.source_rail as ChainRail].sweepsDeposits || !c.own_deposit || c.sweep_status === 'swept')
        .map((c) => c.id);
      return { found, transfersToReturn };
    },

    /** Signs, records and broadcasts a stray deposit's return to its sender from the treasury; a retry re-sends the same transaction. */
    async sendStrayDepositReturn(input: { returnKey: string }) {
      const payment = await deps.db.selectFrom('payments').selectAll().where('idempotency_key', '=', input.returnKey).executeTakeFirstOrThrow();
      try {
        const { txHash } = await deps.chains[payment.rail as ChainRail].sendPayout({
          idempotencyKey: input.returnKey, currency: payment.currency, to: payment.to_address!, amountMinor: BigInt(payment.amount_minor),
        });
        await deps.db.updateTable('payments').set((eb) => ({ status: 'submitted', tx_hash: txHash, attempts: eb('attempts', '+', 1), updated_at: new Date() }))
          .where('idempotency_key', '=', input.returnKey).where('status', '=', 'pending').execute();
        return { txHash };
      } catch (err) {
        if (err instanceof PayoutRejectedError) throw ApplicationFailure.nonRetryable(err.message, FAILURE.PayoutRejected);
        throw err;
      }
    },

    /** Waits (heartbeating) until a stray deposit's return is final on chain. */
    async awaitStrayDepositReturn(input: { returnKey: string }) {
      const payment = await deps.db.selectFrom('payments').select('rail').where('idempotency_key', '=', input.returnKey).executeTakeFirstOrThrow();
      return untilFinal(deps.chains[payment.rail as ChainRail], input.returnKey);
    },

    /** Waits (heartbeating) until the payment is final on chain: confirmed with its fee, or failed. */
    async awaitChainPayment(input: { transferId: string; kind: 'payout' | 'refund'; attempt?: number }) {
      const row = await loadTransfer(deps.db, input.transferId);
      return untilFinal(deps.chains[paymentLeg(row, input.kind).rail as ChainRail], paymentKey(row.id, input.kind, input.attempt));
    },
  };
}

/** Chain positions are block numbers (EVM) or ISO times (the simulators). */
function comparePositions(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

export type ChainActivities = ReturnType<typeof createChainActivities>;
