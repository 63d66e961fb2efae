import type { Db } from '../db';
import type { PaymentRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { strayDepositPostings } from '../domain/transfers';
import { postTransaction } from '../ledger/ledger';

// Deposits that no transfer took, sent back to their senders: what the provider's webhook and the
// return workflows both do to their payments.

/** The ledger key part of an operator's n-th release of a held return (none before the first). */
export const releaseSuffix = (payment: PaymentRow) => (payment.operator_releases?.length ? `:release:${payment.operator_releases.length}` : '');

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
    const payment = await trx.selectFrom('payments').selectAll().where('provider_payment_id', '=', input.providerPaymentId)
      .where('kind', '=', 'deposit_return').forUpdate().executeTakeFirst();
    if (!payment) return null;
    if (payment.status !== 'settled' && payment.status !== 'submitted') return { transferId: payment.transfer_id }; // held already
    await trx.updateTable('payments').set({
      status: 'held', return_code: input.code, updated_at: new Date(),
      failure_reason: `returned by the sender's bank (${input.code}) after it was sent; held for operators`,
    }).where('id', '=', payment.id).execute();
    if (payment.status === 'settled') {
      await postTransaction(trx, tenantOf(payment), {
        idempotencyKey: `${payment.idempotency_key}:ledger:came_back${releaseSuffix(payment)}`, description: "stray deposit return sent back by the sender's bank",
        referenceId: payment.transfer_id, postings: strayDepositPostings(payment.rail, payment.currency, BigInt(payment.amount_minor)),
      });
    }
    return { transferId: payment.transfer_id };
  });
}

