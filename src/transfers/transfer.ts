// Transfers (spec 2.5): their records, the legs their payments move, and what developers see of them.
import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { Database, PaymentKind, PaymentRow, TransferRow } from '../db/schema';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { PAYMENT_RAILS } from '../domain/rails';
import { TRANSFER_STATES, type TransferMoney } from '../domain/transfers';
import { objectId } from '../ids';

type Executor = Kysely<Database> | Transaction<Database>;

export function findTransfer(db: Executor, tenant: Tenant, id: string, opts: { forUpdate?: boolean } = {}) {
  return findTenantRow(db, 'transfers', tenant, id, { what: 'transfer', ...opts });
}

/** Receipt amounts in minor units as the row stores them (strings of integers). */
export interface StoredReceipt {
  initial_minor: string;
  developer_fee_minor: string;
  exchange_fee_minor: string;
  subtotal_minor: string;
  gas_fee_minor: string;
  /** SWIFT payouts (swift_charges): what the sender pays, and what the banks on the way deduct. */
  swift_fee_minor?: string;
  beneficiary_deductions_minor?: string;
  final_minor: string;
  exchange_rate: string;
  source_tx_hash: string | null;
  destination_tx_hash: string | null;
}

/** A transfer by id, for the workflow's activities (the workflow carries the id, not the tenant). */
export function loadTransfer(db: Executor, id: string) {
  return db.selectFrom('transfers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Where each payment of a transfer moves money: deposits and refunds on the source side (the whole
 * amount), payouts and returns on the destination side (the final amount).
 */
export function paymentLeg(row: TransferRow, kind: PaymentKind) {
  // A stray deposit goes back on the source chain, to whoever sent it (its payment row says).
  const sourceSide = kind === 'deposit' || kind === 'refund' || kind === 'deposit_return';
  const money = transferMoney(row);
  return {
    rail: sourceSide ? row.source_rail : row.destination_rail,
    currency: sourceSide ? row.source_currency : row.destination_currency,
    amountMinor: sourceSide ? money.amountMinor : money.finalMinor,
    externalAccountId: sourceSide ? null : row.destination_external_account_id,
    toAddress: { deposit: row.deposit_address, refund: row.source_from_address, payout: row.destination_to_address, return: null, deposit_return: null }[kind],
  };
}

export function transferMoney(row: TransferRow): TransferMoney {
  const r = row.receipt as unknown as StoredReceipt;
  return {
    transferId: row.id,
    customerId: row.customer_id,
    developerId: row.developer_id,
    sourceRail: row.source_rail,
    sourceCurrency: row.source_currency,
    destinationRail: row.destination_rail,
    destinationCurrency: row.destination_currency,
    amountMinor: BigInt(row.amount_minor),
    developerFeeMinor: BigInt(row.developer_fee_minor),
    exchangeFeeMinor: BigInt(r.exchange_fee_minor),
    subtotalMinor: BigInt(r.subtotal_minor),
    gasFeeMinor: BigInt(r.gas_fee_minor),
    swiftFeeMinor: BigInt(r.swift_fee_minor ?? '0'),
    finalMinor: BigInt(r.final_minor),
    sourceAccountId: row.source_account_id,
    destinationAccountId: row.destination_account_id,
  };
}

export function serializeTransfer(row: TransferRow) {
  const r = row.receipt as unknown as StoredReceipt;
  const src = ASSET_SCALE[row.source_currency];
  const dst = ASSET_SCALE[row.destination_currency];
  return {
    id: row.id,
    object: 'transfer' as const,
    state: row.state,
    state_reason: row.state_reason,
    on_behalf_of: row.customer_id,
    client_reference_id: row.client_reference_id,
    route_id: row.route_id,
    amount: formatAmount(BigInt(row.amount_minor), src),
    developer_fee: formatAmount(BigInt(row.developer_fee_minor), src),
    currency: row.source_currency,
    source: {
      payment_rail: row.source_rail as never,
      currency: row.source_currency,
      ...(row.source_from_address ? { from_address: row.source_from_address } : {}),
      ...(row.source_wallet_id ? { wallet_id: row.source_wallet_id } : {}),
      ...(row.source_account_id ? { account_id: row.source_account_id } : {}),
    },
    destination: {
      payment_rail: row.destination_rail as never,
      currency: row.destination_currency,
      ...(row.destination_external_account_id ? { external_account_id: row.destination_external_account_id } : {}),
      ...(row.destination_to_address ? { to_address: row.destination_to_address } : {}),
      ...(row.destination_wallet_id ? { wallet_id: row.destination_wallet_id } : {}),
      ...(row.destination_account_id ? { account_id: row.destination_account_id } : {}),
      ...(row.swift_charges ? { swift_charges: row.swift_charges } : {}),
    },
    source_deposit_instructions: row.deposit_instructions,
    receipt: {
      initial_amount: formatAmount(BigInt(r.initial_minor), src),
      developer_fee: formatAmount(BigInt(r.developer_fee_minor), src),
      exchange_fee: formatAmount(BigInt(r.exchange_fee_minor), src),
      subtotal_amount: formatAmount(BigInt(r.subtotal_minor), src),
      gas_fee: formatAmount(BigInt(r.gas_fee_minor), dst),
      ...(r.swift_fee_minor !== undefined ? {
        swift_fee: formatAmount(BigInt(r.swift_fee_minor), dst),
        beneficiary_deductions: formatAmount(BigInt(r.beneficiary_deductions_minor ?? '0'), dst),
      } : {}),
      final_amount: formatAmount(BigInt(r.final_minor), dst),
      exchange_rate: r.exchange_rate,
      source_tx_hash: r.source_tx_hash,
      destination_tx_hash: r.destination_tx_hash,
    },
    review_reasons: row.review_reasons,
    review_decision: row.review_decision
      ? { decision: row.review_decision.decision, note: row.review_decision.note, decided_at: row.review_decision.decided_at }
      : null,
    return_code: row.return_code,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function serializePayment(row: PaymentRow) {
  return {
    id: row.id,
    object: 'payment' as const,
    transfer_id: row.transfer_id,
    kind: row.kind,
    payment_rail: row.rail as never,
    currency: row.currency,
    amount: formatAmount(BigInt(row.amount_minor), ASSET_SCALE[row.currency]),
    status: row.status,
    external_account_id: row.external_account_id,
    from_address: row.from_address,
    to_address: row.to_address,
    tx_hash: row.tx_hash,
    replaced_tx_hashes: row.replaced_tx_hashes ?? [],
    network_fee: row.network_fee,
    return_code: row.return_code,
    failure_reason: row.failure_reason,
    attempts: row.attempts,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

// A transfer and its payments as developers see them: API answers and the data of their events.
const amountOut = z.string().regex(/^-?\d+(\.\d+)?$/);

export const ReceiptSchema = z
  .object({
    initial_amount: amountOut,
    developer_fee: amountOut,
    exchange_fee: amountOut,
    subtotal_amount: amountOut,
    gas_fee: amountOut,
    swift_fee: amountOut.optional().describe('SWIFT payouts: the fees the sender pays (swift_charges our: all of them; sha: the sending bank\'s; ben: none), taken before the payment is sent'),
    beneficiary_deductions: amountOut.optional()
      .describe('SWIFT payouts: what the correspondent and receiving banks take from the payment on its way (sha, ben); the payee receives final_amount less this'),
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
    route_id: z.string().nullable().describe('The standing route (liquidation address) whose deposit this transfer carries'),
    amount: amountOut,
    developer_fee: amountOut,
    currency: z.string(),
    source: z.object({
      payment_rail: z.enum(PAYMENT_RAILS),
      currency: z.string(),
      from_address: z.string().optional(),
      wallet_id: z.string().optional().describe('The wallet that sent the deposit'),
      account_id: z.string().optional().describe('The platform account the funds came from'),
    }),
    destination: z.object({
      payment_rail: z.enum(PAYMENT_RAILS),
      currency: z.string(),
      external_account_id: z.string().optional(),
      to_address: z.string().optional(),
      wallet_id: z.string().optional().describe('The wallet paid'),
      account_id: z.string().optional().describe('The platform account credited'),
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
