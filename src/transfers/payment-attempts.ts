import type { Db } from '../db';
import type { PaymentKind } from '../db/schema';
import { paymentKey } from '../payments/keys';
import { markPaymentSubmitted, notePaymentAttemptFailed, type PaymentSent } from '../payments/store';

/** A transfer's payout or refund (`attempt` > 1: an operator's retry of a refund), as its activities name it. */
export interface TransferPaymentRef {
  transferId: string;
  kind: PaymentKind;
  attempt?: number;
}

const refOf = (p: TransferPaymentRef) => ({ key: paymentKey(p.transferId, p.kind, p.attempt) });

/** The rail took it, or the chain has its transaction. */
export async function recordPaymentSent(db: Db, p: TransferPaymentRef, sent: PaymentSent) {
  await markPaymentSubmitted(db, refOf(p), sent);
}

/** An attempt failed and will be tried again: counted and shown to operators on the payment and, for a refund, on the transfer. */
export async function recordPaymentFailure(db: Db, p: TransferPaymentRef, reason: string) {
  await db.transaction().execute(async (trx) => {
    await notePaymentAttemptFailed(trx, refOf(p), reason);
    if (p.kind === 'refund') {
      await trx.updateTable('transfers').set({ state_reason: `refund failing: ${reason}`, updated_at: new Date() }).where('id', '=', p.transferId).execute();
    }
  });
}
