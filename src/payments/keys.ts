import type { PaymentKind, PaymentRow } from '../db/schema';

// Every payment has an idempotency key derived from what it is for, so that a retried step, a
// redelivered webhook or a replayed workflow finds the payment it made before instead of a second one.

/**
 * A transfer's payments: `{transfer}:{kind}`. A refund the source bank or chain rejected may be tried
 * again on an operator's word: attempts after the first are new payments (`{transfer}:refund:2`, …).
 */
export const paymentKey = (transferId: string, kind: PaymentKind, attempt = 1) =>
  attempt > 1 ? `${transferId}:${kind}:${attempt}` : `${transferId}:${kind}`;

/**
 * A stray deposit (not the transfer's own, never credited) is a payment of its own,
 * `{transfer}:deposit:unmatched:{deposit id}`; its return to the sender `{transfer}:deposit_return:{deposit id}`.
 */
export const STRAY_DEPOSIT_KEY_PART = ':deposit:unmatched:';
export const STRAY_RETURN_KEY_PART = ':deposit_return:';
export const strayDepositKey = (transferId: string, depositId: string) => `${transferId}${STRAY_DEPOSIT_KEY_PART}${depositId}`;
export const strayReturnKey = (depositKey: string) => depositKey.replace(STRAY_DEPOSIT_KEY_PART, STRAY_RETURN_KEY_PART);
export const strayDepositKeyOf = (returnKey: string) => returnKey.replace(STRAY_RETURN_KEY_PART, STRAY_DEPOSIT_KEY_PART);

/**
 * The suffix of an operator's n-th release of a held return (none before the first): each attempt to
 * return the money has its own ledger and provider keys, so a return that settled, came back and was
 * released again moves the money once per attempt.
 */
export const releaseSuffix = (payment: Pick<PaymentRow, 'operator_releases'>) =>
  (payment.operator_releases?.length ? `:release:${payment.operator_releases.length}` : '');
