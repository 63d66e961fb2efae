// The shape of a transfer's workflow (PIX in, PIX out, the bench's transfer) with all the work taken
// out, for `npm run bench:temporal-ceiling` and `bench:transfers`: the same Temporal commands and
// events as workflows/transfer.ts records for it, nothing else.
import { condition, defineUpdate, patched, proxyLocalActivities, proxySinks, setHandler, upsertSearchAttributes, type Sinks } from '@temporalio/workflow';
import type { createCeilingActivities } from './activities';
import { TransferStateAttr } from '../../src/temporal/search-attributes';

const activities = proxyLocalActivities<ReturnType<typeof createCeilingActivities>>({ startToCloseTimeout: '30 seconds' });

/** Tells the bench's client that the workflow waits for its deposit (outside the history). */
export interface CeilingSinks extends Sinks {
  bench: { awaitingFunds(): void };
}
const { bench } = proxySinks<CeilingSinks>();

/** As the transfer's `offerDeposit`: the deposit arrives as an Update that answers whether it was taken. */
export const deposit = defineUpdate<{ taken: boolean }, [{ railPaymentId: string }]>('deposit');

export async function transferShapedWorkflow(input: { returnWindowMs: number; withoutLocalActivities?: boolean }): Promise<void> {
  // Variant: the same workflow without its local activities, to price them.
  const noOp = input.withoutLocalActivities ? async () => undefined : activities.noOp;
  let funded = false;
  setHandler(deposit, () => {
    funded = true;
    return { taken: true };
  });
  // awaiting_funds: the deposit's Update, or the deposit expiry timer. A transfer's deposit arrives
  // after its first workflow task (its timer started); the client waits for it, so the ceiling's
  // history has that task and timer too.
  bench.awaitingFunds();
  await condition(() => funded, '7 days');
  // funds_received, in_review and the review: one local activity (behind the same kind of patch
  // marker as the transfer's), one state change.
  patched('receive-and-review-at-once');
  await noOp();
  upsertSearchAttributes([{ key: TransferStateAttr, value: 'in_review' }]);
  // payment_submitted, the rail payout and (settled at once) payment_processed: one local activity.
  patched('record-with-rail-payout');
  await noOp();
  upsertSearchAttributes([{ key: TransferStateAttr, value: 'payment_processed' }]);
  // The return window: one more timer and workflow task, and the rail's status when it closes.
  await condition(() => false, input.returnWindowMs);
  await noOp();
}
