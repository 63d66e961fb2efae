import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { ChainAdapters } from '../chains';
import type { Db } from '../db';
import type { OperatorRelease, PaymentRow } from '../db/schema';
import { burnAddressError, cryptoAddressError, isZeroEvmAddress } from '../domain/bank-validation';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { isChainRail, type ChainRail, type CryptoChain } from '../domain/rails';
import { strayDepositKeyOf } from '../payments/keys';
import { findPayment, releaseHeldPayment, requirePayment, undoRelease } from '../payments/store';
import type { returnRailDepositWorkflow } from '../../workflows/rail-deposit-return';
import { railDepositReturnWorkflowId } from '../../workflows/rail-deposit-return-messages';

/**
 * The operator path for a held stray-deposit return (docs/TRANSFERS.md, *Stray deposits*): after a
 * compliance review, send it back after all, or to another address (a mint has no sender; a blocked
 * sender cannot receive). The override is recorded on the payment (`operator_release`), then the
 * transfer's return workflow runs again and sends it. A return that was sent and reverted on chain
 * (its nonce is spent) is signed anew once the chain shows the revert as final. A fiat return the
 * sender's bank rejected is sent again, as a new payment, to the account the deposit came from.
 */
export async function releaseHeldStrayDeposit(
  deps: { db: Db; temporal: Client; taskQueue: string; chains: ChainAdapters },
  input: { paymentId: string; operator: string; note?: string; toAddress?: string },
): Promise<{ workflowId: string; toAddress: string | null }> {
  const payment = await findPayment(deps.db, { id: input.paymentId });
  if (!payment || payment.kind !== 'deposit_return') throw new Error(`No such stray deposit return: ${input.paymentId}`);
  if (payment.status !== 'held') throw new Error(`${payment.id} is ${payment.status}; only a held return can be released`);
  if (!isChainRail(payment.rail)) return releaseHeldRailReturn(deps, payment, input);
  // Signed and sent: released only once its revert is final, so that the new transaction (a new nonce)
  // can never be a second payment.
  let reverted: string | undefined;
  if (payment.signed_transaction) {
    const onChain = await deps.chains[payment.rail as ChainRail].payoutStatus(payment.idempotency_key);
    if (onChain.status !== 'failed') throw new Error(`${payment.id} was sent (${onChain.txHash}) and is ${onChain.status} on chain, not reverted; it cannot be released`);
    reverted = onChain.txHash;
  }
  const toAddress = input.toAddress ?? payment.to_address;
  if (!toAddress || isZeroEvmAddress(toAddress)) throw new Error(`${payment.id} has no sender to return it to: give --to-address`);
  const error = cryptoAddressError(payment.rail as CryptoChain, toAddress) ?? burnAddressError(payment.rail as CryptoChain, toAddress);
  if (error) throw new Error(`--to-address ${error}`);

  await recordRelease(deps.db, payment, input, {
    to_address: toAddress, ...(reverted ? { signed_transaction: null, tx_hash: null, replaced_tx_hashes: null } : {}),
  }, reverted);

  const workflowId = `stray-deposits:${payment.transfer_id}`;
  try {
    await deps.temporal.workflow.start('returnStrayDepositsWorkflow', {
      workflowId, taskQueue: deps.taskQueue, args: [{ transferId: payment.transfer_id }], workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
  } catch (err) {
    // One is running for this transfer's other strays: the next scan starts the one that sends this.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return { workflowId, toAddress };
}

/** Records the operator's release on the held return (the audit trail) and makes it pending again. */
async function recordRelease(
  db: Db, payment: PaymentRow, input: { operator: string; note?: string }, set: Parameters<typeof releaseHeldPayment>[3], reverted?: string,
) {
  const release: OperatorRelease = {
    operator: input.operator, note: input.note ?? null, released_at: new Date().toISOString(),
    held_reason: payment.failure_reason, held_to_address: payment.to_address, ...(reverted ? { reverted_tx_hash: reverted } : {}),
  };
  const released = await releaseHeldPayment(db, payment.id, release, set);
  if (!released) throw new Error(`${payment.id} changed meanwhile; look again`);
}

/** A fiat return goes back through the provider to the account the deposit came from: there is no address to choose. */
async function releaseHeldRailReturn(
  deps: { db: Db; temporal: Client; taskQueue: string }, payment: PaymentRow, input: { operator: string; note?: string; toAddress?: string },
): Promise<{ workflowId: string; toAddress: null }> {
  if (input.toAddress) throw new Error(`${payment.id} is a ${payment.rail} return: it goes back to the account it came from, --to-address does not apply`);
  const stray = await requirePayment(deps.db, { key: strayDepositKeyOf(payment.idempotency_key) });
  await recordRelease(deps.db, payment, input, { return_code: null });
  const workflowId = railDepositReturnWorkflowId(payment.transfer_id, stray.provider_payment_id!);
  try {
    await deps.temporal.workflow.start<typeof returnRailDepositWorkflow>('returnRailDepositWorkflow', {
      workflowId, taskQueue: deps.taskQueue, workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      args: [{
        transferId: payment.transfer_id, providerPaymentId: stray.provider_payment_id!, rail: stray.rail, currency: stray.currency,
        amount: formatAmount(BigInt(stray.amount_minor), ASSET_SCALE[stray.currency] ?? 2), stillWaiting: false,
      }],
    });
  } catch (err) {
    // Nothing rescans fiat returns (the chain scan does for chain ones): held again, so that the
    // operator can release it once Temporal answers.
    await undoRelease(deps.db, payment);
    throw err;
  }
  return { workflowId, toAddress: null };
}
