import { z } from 'zod';
import { objectId } from '../../api/common-schemas';
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

const amountOut = z.string().regex(/^-?\d+(\.\d+)?$/);

export const ReceiptSchema = z
  .object({
    initial_amount: amountOut,
    developer_fee: amountOut,
    exchange_fee: amountOut,
    subtotal_amount: amountOut,
    gas_fee: amountOut,
    final_amount: amountOut,
    exchange_rate: amountOut,
    source_tx_hash: z.string().nullable(),
    destination_tx_hash: z.string().nullable(),
  })
  .meta({ id: 'TransferReceipt' });

export const TransferSchema = z
  .object({
    id: objectId('tr'),
    object: z.literal('transfer'),
    state: z.enum(TRANSFER_STATES as [string, ...string[]]),
    state_reason: z.string().nullable().describe('Why the transfer is where it is: a hold, a rejection, a return, a failing refund'),
    on_behalf_of: z.string(),
    client_reference_id: z.string().nullable(),
    amount: amountOut,
    developer_fee: amountOut,
    currency: z.string(),
    source: z.object({
      payment_rail: z.enum(PAYMENT_RAILS),
      currency: z.string(),
      from_address: z.string().optional(),
    }),
    destination: z.object({
      payment_rail: z.enum(PAYMENT_RAILS),
      currency: z.string(),
      external_account_id: z.string().optional(),
      to_address: z.string().optional(),
      swift_charges: z.string().optional(),
    }),
    source_deposit_instructions: z.record(z.string(), z.string()).describe('Where and how the customer sends the funds'),
    receipt: ReceiptSchema,
    review_reasons: z.array(z.string()).nullable(),
    review_decision: z.object({
      decision: z.enum(['approve', 'reject']),
      note: z.string().nullable(),
      decided_at: z.iso.datetime(),
    }).nullable().describe("The operator's decision on a transfer held in review"),
    return_code: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Transfer' });

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

export const PaymentSchema = z
  .object({
    id: objectId('pay'),
    object: z.literal('payment'),
    transfer_id: z.string(),
    kind: z.enum(['deposit', 'payout', 'return', 'refund', 'deposit_return']),
    payment_rail: z.enum(PAYMENT_RAILS),
    currency: z.string(),
    amount: amountOut,
    status: z.enum(['pending', 'submitted', 'settled', 'failed', 'returned', 'held']),
    external_account_id: z.string().nullable(),
    from_address: z.string().nullable(),
    to_address: z.string().nullable(),
    tx_hash: z.string().nullable(),
    replaced_tx_hashes: z.array(z.string())
      .describe('Chain payouts: earlier transactions with the same nonce that this one replaced at a higher fee (never mined)'),
    network_fee: z.string().nullable().describe('Chain payouts: the fee paid, in the native asset'),
    return_code: z.string().nullable(),
    failure_reason: z.string().nullable(),
    attempts: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Payment' });

export const PaymentListQuery = z.strictObject({
  ...listParams,
  transfer_id: z.string().optional(),
  kind: z.enum(['deposit', 'payout', 'return', 'refund', 'deposit_return']).optional(),
  payment_rail: z.enum(PAYMENT_RAILS).optional(),
  status: z.enum(['pending', 'submitted', 'settled', 'failed', 'returned', 'held']).optional(),
});
export const PaymentListSchema = listSchema(PaymentSchema, 'Payment');
