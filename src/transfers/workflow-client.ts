import type { PlatformDeps } from '../deps';
import type { Tenant } from '../db/tenant-scope';
import { invalidState } from '../errors';
import { awaitWorkflowAnswer, isWorkflowFinished, sendUpdate, type WorkflowDeps } from '../temporal/workflow-answers';
import type { TransferRow } from '../db/schema';
import { RAILS, isChainRail, type FiatRailProfile, type PaymentRail } from '../domain/rails';
import { CurrencyAttr, CustomerIdAttr, DestinationRailAttr, SourceRailAttr, TransferStateAttr } from '../temporal/search-attributes';
import type { transferWorkflow } from '../../workflows/transfer';
import {
  cancelTransfer, decideReview, offerDeposit, type DepositNotice, paymentReturned, refundReturned, retryRefund, type RefundRetryRequest, type ReviewDecisionRequest, type TransferStatus,
} from '../../workflows/transfer-messages';

export const transferWorkflowId = (transferId: string) => `transfer:${transferId}`;

/**
 * How long one deposit-watching activity lasts (it looks at the chain every few seconds meanwhile):
 * a 72-hour expiry takes 144 periods, a history of under a thousand events. Below the watcher's
 * one-hour start-to-close timeout.
 */
const CHAIN_WATCH_MS = 30 * 60_000;

/** Starts `transfer:{id}`; the return windows (of the payout and of a refund) run on the sandbox clock in the sandbox. */
export async function startTransferWorkflow(
  deps: Pick<PlatformDeps, 'config' | 'temporal'>, tenant: Tenant, row: TransferRow, opts: { sourceWalletIsMpc?: boolean; routeDeposit?: DepositNotice; routeDepositRefused?: string } = {},
) {
  const scale = tenant.environment === 'sandbox' ? deps.config.SANDBOX_TIME_SCALE : 1;
  const destination = RAILS[row.destination_rail as PaymentRail];
  const source = RAILS[row.source_rail as PaymentRail];
  // A platform account is credited in the ledger: nothing a bank could return.
  const returnWindowMs = destination.kind === 'fiat' && !row.destination_account_id ? Math.round((destination as FiatRailProfile).returnWindowMs / scale) : 0;
  const refundReturnWindowMs = source.kind === 'fiat' && !row.source_account_id ? Math.round((source as FiatRailProfile).returnWindowMs / scale) : 0;
  const depositExpiryMs = deps.config.TRANSFER_DEPOSIT_EXPIRY_HOURS * 3600_000;
  // A bank deposit reaches the workflow as an Update (offerDepositToTransfer), a cancel too, and an
  // Update runs a delayed workflow's first task at once: until one comes (or the deposit expires)
  // the workflow asks nothing of a worker. A chain deposit is watched, an account's or a route's is
  // taken at once: those start now.
  const startsOnDeposit = source.kind === 'fiat' && !row.source_account_id && !opts.routeDeposit;
  await deps.temporal.workflow.start<typeof transferWorkflow>('transferWorkflow', {
    workflowId: transferWorkflowId(row.id),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [{
      transferId: row.id,
      sourceIsChain: isChainRail(row.source_rail),
      ...(row.source_wallet_id ? { sourceWalletId: row.source_wallet_id } : {}),
      ...(opts.sourceWalletIsMpc ? { sourceWalletIsMpc: true, mpcSignatureExpiryMs: deps.config.MPC_SIGNATURE_EXPIRY_MS } : {}),
      ...(row.source_account_id ? { sourceIsAccount: true } : {}),
      ...(row.destination_account_id ? { destinationIsAccount: true } : {}),
      ...(opts.routeDeposit ? { routeDeposit: opts.routeDeposit } : {}),
      ...(opts.routeDepositRefused ? { routeDepositRefused: opts.routeDepositRefused } : {}),
      destinationIsChain: isChainRail(row.destination_rail),
      depositExpiryMs,
      ...(startsOnDeposit ? { startsOnDeposit: true } : {}),
      returnWindowMs,
      refundReturnWindowMs,
      chainWatchMs: CHAIN_WATCH_MS,
    }],
    typedSearchAttributes: [
      { key: CustomerIdAttr, value: row.customer_id },
      { key: TransferStateAttr, value: row.state },
      { key: SourceRailAttr, value: row.source_rail },
      { key: DestinationRailAttr, value: row.destination_rail },
      { key: CurrencyAttr, value: row.source_currency },
    ],
    staticSummary: `${row.amount_minor} minor units of ${row.source_currency}: ${row.source_rail} → ${row.destination_rail} (${row.destination_currency})${row.route_id ? `, a deposit on route ${row.route_id}` : ''}`,
    workflowIdConflictPolicy: 'USE_EXISTING',
    ...(startsOnDeposit ? { startDelay: depositExpiryMs } : {}),
  });
}

/**
 * A transfer whose workflow started but whose row could not be written: the workflow is ended,
 * unless the row was written after all (the write failed on its answer, not on the row). Best
 * effort: where the database cannot tell, the workflow stays, and its first step fails on the
 * missing row for operators to see.
 */
export async function endWorkflowOfUnwrittenTransfer(deps: Pick<PlatformDeps, 'db' | 'temporal' | 'log'>, transferId: string) {
  try {
    const written = await deps.db.selectFrom('transfers').select('id').where('id', '=', transferId).executeTakeFirst();
    if (!written) await handle(deps, transferId).terminate('its transfer was not created (the row could not be written)');
  } catch (err) {
    deps.log.warn({ transfer_id: transferId, err: String(err) }, 'the workflow of a transfer that could not be written was left running');
  }
}

function handle(deps: Pick<PlatformDeps, 'temporal'>, transferId: string) {
  return deps.temporal.workflow.getHandle(transferWorkflowId(transferId));
}

/** A refused Update is a 409, a finished workflow too; data it could not store a 400; no answer in time (no worker running) a 503. */
function update<T>(deps: WorkflowDeps, afterwards: string, fn: () => Promise<T>, dataField?: string): Promise<T> {
  return sendUpdate(deps, { afterwards, whenFinished: 'The transfer is already final', dataField }, fn);
}

const READ_FIRST = 'read the transfer before you send this again';

/** One cancellation per transfer (the Update id): a cancel sent again after a 503 is the same one. */
export function requestCancellation(deps: WorkflowDeps, transferId: string, reason: string): Promise<TransferStatus> {
  return update(deps, 'cancel it again (the same cancellation) or read the transfer',
    () => handle(deps, transferId).executeUpdate(cancelTransfer, { args: [{ reason }], updateId: `cancel:${transferId}` }));
}

export function submitReviewDecision(deps: WorkflowDeps, transferId: string, d: ReviewDecisionRequest): Promise<TransferStatus> {
  return update(deps, READ_FIRST, () => handle(deps, transferId).executeUpdate(decideReview, { args: [d] }), 'note');
}

/** An operator tries a rejected refund again; a 409 when the transfer has none waiting. */
export function submitRefundRetry(deps: WorkflowDeps, transferId: string, r: RefundRetryRequest): Promise<TransferStatus> {
  return update(deps, READ_FIRST, () => handle(deps, transferId).executeUpdate(retryRefund, { args: [r] }));
}

/**
 * Offers a fiat deposit to its transfer's workflow: true when it took the money as the transfer's
 * funds (again true for the same payment: the update id is the provider's payment id), false when
 * the transfer already has its deposit or has stopped waiting, its workflow finished or not. With no
 * worker running it is a 503 and the provider delivers again: the second offer is the same one,
 * whether or not the workflow has taken the first meanwhile.
 */
export async function offerDepositToTransfer(deps: WorkflowDeps, transferId: string, railPaymentId: string): Promise<boolean> {
  try {
    const { taken } = await awaitWorkflowAnswer(deps, 'deliver the event again (a repeat is handled once)',
      () => handle(deps, transferId).executeUpdate(offerDeposit, { args: [{ railPaymentId }], updateId: `deposit:${railPaymentId}` }));
    return taken;
  } catch (err) {
    if (isWorkflowFinished(err)) return false;
    throw err;
  }
}

/** The receiving bank returned the payout, or the source bank a settled refund (`railPaymentId`: the provider's id of which). */
export async function notifyReturn(deps: Pick<PlatformDeps, 'temporal'>, transferId: string, code: string, kind: 'payout' | 'refund', railPaymentId: string) {
  try {
    await handle(deps, transferId).signal(kind === 'refund' ? refundReturned : paymentReturned, { code, railPaymentId });
  } catch (err) {
    if (isWorkflowFinished(err)) throw invalidState("The rail's return window has closed");
    throw err;
  }
}
