import type { Client } from '@temporalio/client';
import type { webhookEndpointWorkflow } from '../../workflows/webhook-endpoint';

export const webhookWorkflowId = (endpointId: string) => `webhook-endpoint:${endpointId}`;

/** One delivery activity lasts this long: it sends what is due, and waits for more, meanwhile. */
const DELIVERY_PERIOD_MS = 5 * 60_000;

/** Starts the endpoint's delivery loop (once: a second start finds it running). */
export async function startWebhookEndpointWorkflow(deps: { config: { TEMPORAL_TASK_QUEUE: string }; temporal: Client }, endpointId: string) {
  await deps.temporal.workflow.start<typeof webhookEndpointWorkflow>('webhookEndpointWorkflow', {
    workflowId: webhookWorkflowId(endpointId),
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    args: [{ endpointId, periodMs: DELIVERY_PERIOD_MS }],
    staticSummary: `Deliver events to webhook endpoint ${endpointId}`,
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}
