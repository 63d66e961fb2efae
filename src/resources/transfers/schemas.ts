import { z } from 'zod';
import { PaymentSchema, TransferSchema } from '../../transfers/transfer';
import { listParams, listSchema } from '../../api/pagination';
import { TRANSFER_STATES } from '../../domain/transfers';
import { PAYMENT_RAILS } from '../../domain/rails';

const decimal = z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal string such as "100.00"');
/** Currency codes are lower case; the spec shows one upper-case example, which is accepted. */
const currency = z.string().trim().regex(/^[A-Za-z]{3,5}$/, 'must be a currency or asset code such as usd or usdc').transform((v) => v.toLowerCase());

export const TransferCreate = z.strictObject({
  amount: decimal,
  on_behalf_of: z.string().min(1),
  developer_fee: decimal.optional(),
  client_reference_id: z.string().trim().min(1).max(128).optional(),
  source: z.strictObject({
    payment_rail: z.enum(PAYMENT_RAILS),
    currency,
    from_address: z.string().trim().min(1).optional(),
    account_id: z.string().min(1).optional(),
  }),
  destination: z.strictObject({
    payment_rail: z.enum(PAYMENT_RAILS),
    currency,
    external_account_id: z.string().min(1).optional(),
    to_address: z.string().trim().min(1).optional(),
    account_id: z.string().min(1).optional(),
    swift_charges: z.enum(['sha', 'our', 'ben']).optional(),
  }),
});
export type TransferCreateInput = z.output<typeof TransferCreate>;

export const TransferListQuery = z.strictObject({
  ...listParams,
  state: z.enum(TRANSFER_STATES as [string, ...string[]]).optional(),
  on_behalf_of: z.string().optional(),
  source_payment_rail: z.enum(PAYMENT_RAILS).optional(),
  destination_payment_rail: z.enum(PAYMENT_RAILS).optional(),
  currency: currency.optional(),
  client_reference_id: z.string().optional(),
});
export const TransferListSchema = listSchema(TransferSchema, 'Transfer');

export const PaymentListQuery = z.strictObject({
  ...listParams,
  transfer_id: z.string().optional(),
  kind: z.enum(['deposit', 'payout', 'return', 'refund', 'deposit_return']).optional(),
  payment_rail: z.enum(PAYMENT_RAILS).optional(),
  status: z.enum(['pending', 'submitted', 'settled', 'failed', 'returned', 'held']).optional(),
});
export const PaymentListSchema = listSchema(PaymentSchema, 'Payment');
