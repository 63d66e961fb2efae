import type { ChainDeposit } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { TransferRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { strayDepositPostings } from '../domain/transfers';
import { postTransaction } from '../ledger/ledger';
import { releaseSuffix, strayDepositKey } from '../payments/keys';
import { insertPayment, markPaymentHeld, sentPaymentByProviderId } from '../payments/store';
import { setStateReason } from './steps';

// Deposits that no transfer took: recorded as failed deposits, never credited, and sent back to their
// senders (stray-deposit-returns.ts; workflows/stray-deposit-return.ts and rail-deposit-return.ts).

/** A stray deposit as recorded: a token transfer (hash, sender), or a fiat payment (the provider's id; its own rail and currency). */
export interface StrayDepositRecord {
  key: string;
  amountMinor: bigint;
  tx_hash?: string;
  from_address?: string;
  provider_payment_id?: string;
  rail?: string;
  currency?: string;
}

/**
 * Deposits that are not the transfer's own, listed as failed deposits and never credited: each
 * goes back to its sender. `stillWaiting`: the transfer goes on waiting for its deposit, and its
 * `state_reason` tells the sender what went wrong with this one.
 */
export async function recordStrayDeposits(db: Db, transferId: string, deposits: StrayDepositRecord[], stillWaiting: boolean): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('transfers').selectAll().where('id', '=', transferId).forUpdate().executeTakeFirstOrThrow();
    const describe = describeStray(row);
    for (const d of deposits) {
      await insertPayment(trx, {
        developer_id: row.developer_id, environment: row.environment, transfer_id: row.id, kind: 'deposit',
        rail: d.rail ?? row.source_rail, currency: d.currency ?? row.source_currency, amount_minor: d.amountMinor, status: 'failed',
        to_address: row.deposit_address, tx_hash: d.tx_hash, from_address: d.from_address, provider_payment_id: d.provider_payment_id,
        failure_reason: describe.whyNotCredited(d), idempotency_key: d.key,
      });
    }
    if (!stillWaiting || row.state !== 'awaiting_funds' || deposits.length === 0) return;
    const last = deposits[deposits.length - 1]!;
    await setStateReason(trx, row, `received ${describe.received(last)}, not the quoted ${describe.quoted(last)}: `
      + 'only a deposit of exactly the quoted amount funds the transfer');
  });
}

/**
 * Token transfers to a transfer's deposit address that are not its deposit (another amount, the
 * quoted amount once more, or anything after the transfer stopped waiting).
 */
export function recordStrayChainDeposits(db: Db, transferId: string, deposits: ChainDeposit[], stillWaiting: boolean): Promise<void> {
  return recordStrayDeposits(db, transferId, deposits.map((d) => ({
    key: strayDepositKey(transferId, d.id), amountMinor: d.amountMinor, tx_hash: d.txHash, from_address: d.from,
  })), stillWaiting);
}

/** "1.00 usdc … the quoted 3.00"; naming the currency and rail only where they differ from the quote. */
function describeStray(row: TransferRow) {
  const otherRail = (d: StrayDepositRecord) => d.rail !== undefined && d.rail !== row.source_rail;
  const otherCurrency = (d: StrayDepositRecord) => d.currency !== undefined && d.currency !== row.source_currency;
  const received = (d: StrayDepositRecord) => {
    const currency = d.currency ?? row.source_currency;
    return `${formatAmount(d.amountMinor, ASSET_SCALE[currency] ?? 2)} ${currency}${otherRail(d) ? ` over ${d.rail}` : ''}`;
  };
  const quoted = (d: StrayDepositRecord) => formatAmount(BigInt(row.amount_minor), ASSET_SCALE[row.source_currency]!)
    + (otherRail(d) || otherCurrency(d) ? ` ${row.source_currency}` : '') + (otherRail(d) ? ` over ${row.source_rail}` : '');
  const whyNotCredited = (d: StrayDepositRecord) => (row.state !== 'awaiting_funds'
    ? `arrived after the transfer was ${row.state === 'canceled' ? 'canceled' : 'funded'}; not credited, returned to the sender`
    : d.amountMinor === BigInt(row.amount_minor) && !otherRail(d) && !otherCurrency(d)
      ? 'a further deposit of the quoted amount; not credited, returned to the sender'
      : `${received(d)} does not match the quoted ${quoted(d)}; not credited, returned to the sender`);
  return { received, quoted, whyNotCredited };
}

/**
 * The sender's bank sent back a fiat return after it had settled (`payment.returned` of the
 * provider's id of a `deposit_return`): the money is with the platform again, owed to the sender.
 * The return is held for operators with the code (`payments release` sends it again) and, if it was
 * recorded settled, the ledger takes the money back into `unapplied_deposits`, in the same
 * transaction. One not recorded settled yet (its workflow has not seen the settlement) still holds
 * the money in the ledger: held, its workflow's record of the settlement then finds it held and
 * moves nothing. Null when the id is not a deposit return's latest attempt.
 */
export async function holdReturnedDepositReturn(db: Db, input: { providerPaymentId: string; code: string }): Promise<{ transferId: string } | null> {
  return db.transaction().execute(async (trx) => {
    const payment = await sentPaymentByProviderId(trx, input.providerPaymentId, ['deposit_return'], { forUpdate: true });
    if (!payment) return null;
    if (payment.status !== 'settled' && payment.status !== 'submitted') return { transferId: payment.transfer_id }; // held already
    await markPaymentHeld(trx, { id: payment.id }, { reason: `returned by the sender's bank (${input.code}) after it was sent; held for operators`, code: input.code });
    if (payment.status === 'settled') {
      await postTransaction(trx, tenantOf(payment), {
        idempotencyKey: `${payment.idempotency_key}:ledger:came_back${releaseSuffix(payment)}`, description: "stray deposit return sent back by the sender's bank",
        referenceId: payment.transfer_id, postings: strayDepositPostings(payment.rail, payment.currency, BigInt(payment.amount_minor)),
      });
    }
    return { transferId: payment.transfer_id };
  });
}
