import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks';
import { webhookTaskQueue } from '../src/temporal/task-queues';

export interface WebhookEndpointInput {
  endpointId: string;
  /** How long one delivery activity runs (it sends what is due, and waits for more, meanwhile). */
  periodMs: number;
}

/** Activities per run before the history starts afresh (continue-as-new). */
const PERIODS_PER_RUN = 100;

/**
 * `webhook-endpoint:{id}`: one per endpoint, for as long as it exists. Each period is one activity
 * that delivers the endpoint's due events in batches (src/webhooks/delivery.ts), so the workflow's
 * work grows with time, not with the number of events; a slow or dead endpoint holds only its own
 * loop. Retries and their schedule are rows in `webhook_deliveries`, not timers here.
 */
export async function webhookEndpointWorkflow(input: WebhookEndpointInput): Promise<void> {
  const { deliverWebhooks } = proxyActivities<WebhookActivities>({
    taskQueue: webhookTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: input.periodMs + 120_000,
    // Beats after every round of sends (each bounded by WEBHOOK_TIMEOUT_MS, at most 20 s): a worker
    // that died mid-delivery is noticed within this, and its deliveries are sent again.
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
  });
  for (let i = 0; i < PERIODS_PER_RUN; i++) {
    const { gone } = await deliverWebhooks({ endpointId: input.endpointId, maxWaitMs: input.periodMs });
    if (gone) return;
  }
  await continueAsNew<typeof webhookEndpointWorkflow>(input);
}
