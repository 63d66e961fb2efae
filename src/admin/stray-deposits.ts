import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Db } from '../db';
import type { OperatorRelease } from '../db/schema';
import { cryptoAddressError, isZeroEvmAddress, type CryptoChain } from '../domain/bank-validation';

/**
 * The operator path for a held stray-deposit return (docs/TRANSFERS.md, *Stray deposits*): after a
 * compliance review, send it back after all, or to another address (a mint has no sender; a blocked
 * sender cannot receive). The override is recorded on the payment (`operator_release`), then the
 * transfer's return workflow runs again and sends it.
 */
export async function releaseHeldStrayDeposit(
  deps: { db: Db; temporal: Client; taskQueue: string },
  input: { paymentId: string; operator: string; note?: string; toAddress?: string },
): Promise<{ workflowId: string; toAddress: string }> {
  const payment = await deps.db.selectFrom('payments').selectAll().where('id', '=', input.paymentId).executeTakeFirst();
  if (!payment || payment.kind !== 'deposit_return') throw new Error(`No such stray deposit return: ${input.paymentId}`);
  if (payment.status !== 'held') throw new Error(`${payment.id} is ${payment.status}; only a held return can be released`);
  // A return that was signed went on chain and reverted: its nonce is spent, a new one needs a person.
  if (payment.signed_transaction) throw new Error(`${payment.id} was sent and failed on chain (${payment.tx_hash}); it cannot be sent again from here`);
  const toAddress = input.toAddress ?? payment.to_address;
  if (!toAddress || isZeroEvmAddress(toAddress)) throw new Error(`${payment.id} has no sender to return it to: give --to-address`);
  const error = cryptoAddressError(payment.rail as CryptoChain, toAddress);
  if (error) throw new Error(`--to-address ${error}`);

  const release: OperatorRelease = {
    operator: input.operator, note: input.note ?? null, released_at: new Date().toISOString(),
    held_reason: payment.failure_reason, held_to_address: payment.to_address,
  };
  const updated = await deps.db.updateTable('payments')
    .set({
      status: 'pending', to_address: toAddress, failure_reason: null, updated_at: new Date(),
      operator_releases: sql<string>`coalesce(operator_releases, '[]'::jsonb) || ${JSON.stringify([release])}::jsonb`,
    })
    .where('id', '=', payment.id).where('status', '=', 'held').executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) throw new Error(`${payment.id} changed meanwhile; look again`);

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
