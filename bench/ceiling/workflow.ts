// The shape of a transfer's workflow with all the work taken out, for `npm run bench:temporal-ceiling`:
// the same Temporal commands and events, nothing else.
import { condition, defineSignal, proxyLocalActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { createCeilingActivities } from './activities';
import { TransferStateAttr } from '../../src/temporal/search-attributes';

const activities = proxyLocalActivities<ReturnType<typeof createCeilingActivities>>({ startToCloseTimeout: '30 seconds' });

export const deposit = defineSignal('deposit');

export async function transferShapedWorkflow(input: { returnWindowMs: number; withoutLocalActivities?: boolean }): Promise<void> {
  // Variant: the same workflow without its local activities, to price them.
  const noOp = input.withoutLocalActivities ? async () => undefined : activities.noOp;
  let funded = false;
  setHandler(deposit, () => void (funded = true));
  // awaiting_funds: a signal, or the deposit expiry timer.
  await condition(() => funded, '7 days');
  // Seven steps, as the real workflow records them (funds_received, in_review, review,
  // payment_submitted, rail payout, payment_processed, return-window check), four state changes.
  for (const state of ['funds_received', 'in_review']) {
    await noOp();
    upsertSearchAttributes([{ key: TransferStateAttr, value: state }]);
  }
  await noOp();
  await noOp();
  upsertSearchAttributes([{ key: TransferStateAttr, value: 'payment_submitted' }]);
  await noOp();
  await noOp();
  upsertSearchAttributes([{ key: TransferStateAttr, value: 'payment_processed' }]);
  // The return window: one more timer and workflow task.
  await condition(() => false, input.returnWindowMs);
  await noOp();
}
