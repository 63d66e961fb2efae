import { z } from 'zod';
import { currencyCode } from '../../transfers/service';
import { PaymentSchema, TransferSchema } from '../../transfers/transfer';
import { listParams, listSchema } from '../../api/pagination';
import { TRANSFER_STATES } from '../../domain/transfers';
import { PAYMENT_RAILS } from '../../domain/rails';

export const TransferListQuery = z.strictObject({
  ...listParams,
  state: z.enum(TRANSFER_STATES as [string, ...string[]]).optional(),
  on_behalf_of: z.string().optional(),
  source_payment_rail: z.enum(PAYMENT_RAILS).optional(),
  destination_payment_rail: z.enum(PAYMENT_RAILS).optional(),
  currency: currencyCode.optional(),
  client_reference_id: z.string().optional(),
  route_id: z.string().optional().describe("Only the transfers of a standing route's deposits"),
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
