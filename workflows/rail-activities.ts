import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { FiatRailActivities } from '../activities/fiat-rails';

// How workflows call the fiat-rail activities (transfers and stray-deposit returns alike).

// Short calls to the provider's API: local activities, run by the worker that runs the workflow, so
// they cost no round trip through the Temporal server. A call lost with a crashed worker runs again,
// safely: idempotency keys.
export const rails = proxyLocalActivities<FiatRailActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export type { RailPayoutSent } from '../activities/fiat-rails';

/** Sleeps until the rail payment's settlement time, then asks the rail, until it is no longer pending. */
export async function untilSettled(sent: { railPaymentId: string; status: string; settlesAt: number }) {
  let payment = sent;
  while (payment.status === 'pending') {
    await sleep(Math.max(1, payment.settlesAt - Date.now()));
    payment = { railPaymentId: sent.railPaymentId, ...(await rails.railPaymentStatus({ railPaymentId: sent.railPaymentId })) };
  }
  return payment as Awaited<ReturnType<typeof rails.railPaymentStatus>> & { railPaymentId: string };
}
