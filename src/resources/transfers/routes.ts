import { z } from 'zod';
import { invalidField, invalidState } from '../../errors';
import { paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import type { Db } from '../../db';
import type { TransferRow } from '../../db/schema';
import { tenantRows } from '../../db/tenant-scope';
import { ASSET_SCALE, formatAmount, parseAmount } from '../../domain/money';
import { CANCELABLE } from '../../domain/transfers';
import { RETURN_CODES, isChainRail, railBoundsMinor, type ChainRail, type FiatRail, type PaymentRail } from '../../domain/rails';
import { handleRailEvent } from '../../transfers/rail-events';
import { findPayment, findTenantPayment, latestPayment, tenantPayments } from '../../payments/store';
import { findTransfer, PaymentSchema, serializePayment, serializeTransfer, TransferSchema } from '../../transfers/transfer';
import { PaymentListQuery, PaymentListSchema, TransferListQuery, TransferListSchema } from './schemas';
import { prepareTransfer } from '../../transfers/prepare';
import { checkProvidersServe, checkTransferShape, prepareChainLegs, resolveRefundDestination, TransferCreate } from '../../transfers/service';
import { bankFileRailFor } from '../../providers/bank-files/settings';
import { requestCredit } from '../../sandbox-bank/credits';
import {
  endWorkflowOfUnwrittenTransfer, notifyReturn, requestCancellation, startTransferWorkflow, submitRefundRetry, submitReviewDecision,
} from '../../transfers/workflow-client';

const TAG = 'Transfers';
const TransferIdParams = z.strictObject({ transfer_id: z.string() });

export const createTransferRoute = defineRoute({
  method: 'post',
  path: '/v0/transfers',
  summary: 'Create a transfer: returns it in awaiting_funds with deposit instructions and a quoted receipt',
  tag: TAG,
  permission: 'transfers:write',
  body: TransferCreate,
  responses: { 201: TransferSchema },
  handler: async ({ deps, tenant, body, write, writeStatement }) => {
    const amounts = checkTransferShape(body);
    checkProvidersServe(deps, tenant, body);
    // Chain calls happen before the database transaction opens (never hold a transaction on the network).
    const chainLegs = await prepareChainLegs(deps, tenant, body);
    if (body.source.account_id || body.source.wallet_id) {
      // What the source holds is reserved in the transaction that writes the row, under the account's
      // or the wallet's row lock: concurrent transfers from one source see each other, and no more are
      // accepted than it can fund (docs/WALLETS.md). The workflow is started inside it: without
      // Temporal nothing is created (503).
      return write(async (trx) => {
        const transfer = await prepareTransfer(trx, deps, tenant, body, { ...amounts, ...chainLegs });
        await transfer.write(trx);
        await startTransferWorkflow(deps, tenant, transfer.row, { sourceWalletIsMpc: transfer.sourceWalletIsMpc });
        return { status: 201, body: serializeTransfer(transfer.row) };
      });
    }
    // Checked by reading; the workflow started, then the row and its event written in one statement.
    // Without Temporal nothing is created (503). The workflow waits for the row: its first step on
    // it comes with the deposit, or a watcher that reads it first tries again.
    const transfer = await prepareTransfer(deps.db, deps, tenant, body, { ...amounts, ...chainLegs });
    await startTransferWorkflow(deps, tenant, transfer.row, { sourceWalletIsMpc: transfer.sourceWalletIsMpc });
    try {
      return await writeStatement(async (db) => {
        await transfer.write(db);
        return { status: 201, body: serializeTransfer(transfer.row) };
      });
    } catch (err) {
      await endWorkflowOfUnwrittenTransfer(deps, transfer.row.id);
      throw err;
    }
  },
});

export const listTransfers = defineRoute({
  method: 'get',
  path: '/v0/transfers',
  summary: 'List transfers, newest first',
  tag: TAG,
  permission: 'transfers:read',
  query: TransferListQuery,
  responses: { 200: TransferListSchema },
  handler: async ({ deps, tenant, query }) => {
    let q = tenantRows(deps.db, 'transfers', tenant);
    if (query.state) q = q.where('state', '=', query.state as never);
    if (query.on_behalf_of) q = q.where('customer_id', '=', query.on_behalf_of);
    if (query.source_payment_rail) q = q.where('source_rail', '=', query.source_payment_rail);
    if (query.destination_payment_rail) q = q.where('destination_rail', '=', query.destination_payment_rail);
    if (query.currency) q = q.where((eb) => eb.or([eb('source_currency', '=', query.currency!), eb('destination_currency', '=', query.currency!)]));
    if (query.client_reference_id) q = q.where('client_reference_id', '=', query.client_reference_id);
    if (query.route_id) q = q.where('route_id', '=', query.route_id);
    return { status: 200, body: await paginate(q, query, serializeTransfer) };
  },
});

export const getTransfer = defineRoute({
  method: 'get',
  path: '/v0/transfers/{transfer_id}',
  summary: 'Retrieve a transfer',
  tag: TAG,
  permission: 'transfers:read',
  params: TransferIdParams,
  responses: { 200: TransferSchema },
  handler: async ({ deps, tenant, params }) => ({ status: 200, body: serializeTransfer(await findTransfer(deps.db, tenant, params.transfer_id)) }),
});

export const cancelTransferRoute = defineRoute({
  method: 'delete',
  path: '/v0/transfers/{transfer_id}',
  summary: 'Cancel a transfer before its payout is submitted; funds already received go back to the source',
  tag: TAG,
  permission: 'transfers:write',
  params: TransferIdParams,
  responses: { 200: TransferSchema },
  handler: async ({ deps, tenant, params }) => {
    const row = await findTransfer(deps.db, tenant, params.transfer_id);
    if (!CANCELABLE.includes(row.state)) throw invalidState(`The transfer is ${row.state}; it can no longer be canceled`);
    // The workflow decides (an Update): it alone knows whether the payout has started.
    await requestCancellation(deps, row.id, 'canceled_by_developer');
    return { status: 200, body: serializeTransfer(await findTransfer(deps.db, tenant, row.id)) };
  },
});

export const listPayments = defineRoute({
  method: 'get',
  path: '/v0/payments',
  summary: 'List the rail and chain payments behind transfers: deposits, payouts, returns and refunds',
  tag: 'Payments',
  permission: 'payments:read',
  query: PaymentListQuery,
  responses: { 200: PaymentListSchema },
  handler: async ({ deps, tenant, query }) => {
    const q = tenantPayments(deps.db, tenant, { transferId: query.transfer_id, kind: query.kind, rail: query.payment_rail, status: query.status });
    return { status: 200, body: await paginate(q, query, serializePayment) };
  },
});

export const getPayment = defineRoute({
  method: 'get',
  path: '/v0/payments/{payment_id}',
  summary: 'Retrieve a payment',
  tag: 'Payments',
  permission: 'payments:read',
  params: z.strictObject({ payment_id: z.string() }),
  responses: { 200: PaymentSchema },
  handler: async ({ deps, tenant, params }) => ({
    status: 200,
    body: serializePayment(await findTenantPayment(deps.db, tenant, params.payment_id)),
  }),
});

export const sandboxDeposit = defineRoute({
  method: 'post',
  path: '/v0/sandbox/transfers/{transfer_id}/deposit',
  summary: "Sandbox: the customer's deposit arrives (a fiat payment with the deposit reference, or a token transfer to the deposit address)",
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: TransferIdParams,
  body: z.strictObject({
    amount: z.string().optional()
      .describe('Another amount than quoted: it does not fund the transfer, and goes back to the sender (a stray deposit)'),
    sender_name: z.string().trim().min(1).max(255).optional()
      .describe("Fiat: the sending account holder's name, as a provider reports it (screened before a stray deposit goes back)"),
  }).optional(),
  responses: { 200: TransferSchema },
  handler: async ({ deps, tenant, params, body }) => {
    const row = await findTransfer(deps.db, tenant, params.transfer_id);
    if (row.state !== 'awaiting_funds') throw invalidState(`The transfer is ${row.state}; it is not awaiting funds`);
    const scale = ASSET_SCALE[row.source_currency]!;
    const amountMinor = body?.amount === undefined ? BigInt(row.amount_minor) : parseAmount(body.amount, scale);
    if (amountMinor === null) throw invalidField('body', 'amount', `must be a positive amount with at most ${scale} decimals for ${row.source_currency}`);
    // Another amount than quoted, but still one payment the source rail can carry.
    const { max } = railBoundsMinor(row.source_rail as PaymentRail, row.source_currency);
    if (amountMinor > max) throw invalidField('body', 'amount', `${row.source_rail} carries at most ${formatAmount(max, scale)} ${row.source_currency} in one payment`);
    if (isChainRail(row.source_rail)) {
      // A real token transfer on the chain; the workflow finds it like any other deposit.
      await deps.sandbox.chains[row.source_rail as ChainRail].sandboxDeposit({ currency: row.source_currency, address: row.deposit_address!, amountMinor });
    } else if (deps.config.SANDBOX_BANK_DIR && bankFileRailFor(deps.config, tenant.environment, row.source_rail)) {
      // The sandbox bank sends it as a bank does: a credit in its outbox on its next run, read like any other.
      requestCredit(deps.config.SANDBOX_BANK_DIR, {
        rail: row.source_rail === 'sepa' ? 'sepa' : 'ach', amountMinor, reference: row.deposit_reference, senderName: body?.sender_name ?? 'Sandbox Sender',
      });
    } else {
      const rail = row.source_rail as FiatRail;
      const inbound = await deps.sandbox.rails.receiveInbound({ tenant, rail, amountMinor, currency: row.source_currency, reference: row.deposit_reference });
      // The path a provider's webhook takes (rail-events.ts), as the simulated provider's event.
      await handleRailEvent(deps, {
        id: `sandbox:${inbound.id}`, type: 'payment.received', providerPaymentId: inbound.id, rail, currency: row.source_currency, amountMinor, reference: row.deposit_reference,
        ...(body?.sender_name ? { senderName: body.sender_name } : {}),
      }, tenant.environment);
    }
    return { status: 200, body: serializeTransfer(row) };
  },
});

export const sandboxReviewDecision = defineRoute({
  method: 'post',
  path: '/v0/sandbox/transfers/{transfer_id}/review',
  summary: 'Sandbox: decide a transfer held in review (approve pays it out; reject refunds it and cancels it)',
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: TransferIdParams,
  body: z.strictObject({ decision: z.enum(['approve', 'reject']), note: z.string().trim().max(500).optional() }),
  responses: { 200: TransferSchema },
  handler: async ({ deps, tenant, auth, params, body }) => {
    const row = await findTransfer(deps.db, tenant, params.transfer_id);
    await submitReviewDecision(deps, row.id, { approve: body.decision === 'approve', note: body.note, operator: `sandbox:${auth.keyId}` });
    return { status: 200, body: serializeTransfer(await findTransfer(deps.db, tenant, row.id)) };
  },
});

export const sandboxRetryRefund = defineRoute({
  method: 'post',
  path: '/v0/sandbox/transfers/{transfer_id}/retry_refund',
  summary: 'Sandbox: try again a refund the source bank or chain rejected: a new refund payment to the source, or where the body says',
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: TransferIdParams,
  body: z.strictObject({
    to_address: z.string().trim().min(1).optional().describe('Chain sources: send the refund to this address instead of from_address'),
    external_account_id: z.string().trim().min(1).optional()
      .describe("Another verified account of the customer that the source rail pays (or, on chains, a crypto address of the source chain)"),
  }).optional(),
  responses: { 200: TransferSchema },
  handler: async ({ deps, tenant, auth, params, body }) => {
    const row = await findTransfer(deps.db, tenant, params.transfer_id);
    const destination = await resolveRefundDestination(deps.db, tenant, row, body ?? {});
    await submitRefundRetry(deps, row.id, { operator: `sandbox:${auth.keyId}`, destination });
    return { status: 200, body: serializeTransfer(await findTransfer(deps.db, tenant, row.id)) };
  },
});

export const sandboxReturn = defineRoute({
  method: 'post',
  path: '/v0/sandbox/transfers/{transfer_id}/return',
  summary: "Sandbox: the receiving bank returns a processed fiat payout, or the source bank a settled fiat refund, inside the rail's return window; "
    + "or, with payment_id, the sender's bank sends back the return of a stray deposit",
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: TransferIdParams,
  body: z.strictObject({
    code: z.string().refine((c) => c in RETURN_CODES, `must be one of ${Object.keys(RETURN_CODES).join(', ')}`).default('R01'),
    payment_id: z.string().optional().describe("A fiat deposit_return of this transfer, sent or settled: the sender's bank sends it back (held for operators)"),
  }),
  responses: { 200: TransferSchema },
  handler: async ({ deps, tenant, params, body }) => {
    const row = await findTransfer(deps.db, tenant, params.transfer_id);
    if (body.payment_id !== undefined) {
      const sent = await findPayment(deps.db, { id: body.payment_id });
      if (!sent || sent.transfer_id !== row.id || sent.kind !== 'deposit_return' || isChainRail(sent.rail)) throw invalidField('body', 'payment_id', `must be a fiat deposit_return of ${row.id}`);
      if (sent.status !== 'submitted' && sent.status !== 'settled') throw invalidState(`The return is ${sent.status}; only a sent or settled return can come back`);
      await deps.sandbox.rails.returnPayment(sent.provider_payment_id!, body.code);
      // The path a provider's webhook takes (rail-events.ts), as the simulated provider's event.
      await handleRailEvent(deps, { id: `sandbox:return:${sent.provider_payment_id}`, type: 'payment.returned', providerPaymentId: sent.provider_payment_id!, code: body.code }, tenant.environment);
      return { status: 200, body: serializeTransfer(row) };
    }
    const payment = await returnablePayment(deps.db, row);
    // The workflow hears of it first: once the return window has closed it has finished, and this is a 409.
    await notifyReturn(deps, row.id, body.code, payment.kind, payment.provider_payment_id!);
    await deps.sandbox.rails.returnPayment(payment.provider_payment_id!, body.code);
    return { status: 200, body: serializeTransfer(row) };
  },
});

/** What the sandbox return route sends back: the processed payout, or the latest settled refund of a final transfer. */
async function returnablePayment(db: Db, row: TransferRow): Promise<{ kind: 'payout' | 'refund'; provider_payment_id: string | null }> {
  if (row.state === 'payment_processed') {
    if (isChainRail(row.destination_rail)) throw invalidState('Chain payouts are final; only fiat payouts can be returned');
    const payout = await latestPayment(db, row.id, 'payout');
    return { kind: 'payout', provider_payment_id: payout!.provider_payment_id };
  }
  if (row.state === 'refunded' || row.state === 'canceled') {
    if (isChainRail(row.source_rail)) throw invalidState('Chain refunds are final; only fiat refunds can be returned');
    const refund = await latestPayment(db, row.id, 'refund', 'settled');
    if (!refund) throw invalidState(`The transfer is ${row.state} and has no settled refund to return`);
    return { kind: 'refund', provider_payment_id: refund.provider_payment_id };
  }
  throw invalidState(`The transfer is ${row.state}; only a processed payout or a settled refund can be returned`);
}

export const transferRoutes = [
  createTransferRoute, listTransfers, getTransfer, cancelTransferRoute, listPayments, getPayment, sandboxDeposit, sandboxReviewDecision, sandboxRetryRefund, sandboxReturn,
];
