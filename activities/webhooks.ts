import { Context } from '@temporalio/activity';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { deliverDueWebhooks, type DeliverySettings } from '../src/webhooks/delivery';

/** Webhook delivery (src/webhooks/delivery.ts), on a task queue of its own: each endpoint's loop holds one slot while it waits for events. */
export function createWebhookActivities(deps: { db: Db; cipher: DataCipher; delivery: DeliverySettings }) {
  return {
    /**
     * Sends what is due to one endpoint for up to `maxWaitMs`, heartbeating; `gone` once the endpoint
     * is deleted. Cancelled (the worker stops, the workflow is cancelled): it ends at once, and what it
     * was sending is sent again later.
     */
    async deliverWebhooks(input: { endpointId: string; maxWaitMs: number }) {
      const context = Context.current();
      return deliverDueWebhooks(deps, input.endpointId, {
        ...deps.delivery, maxWaitMs: input.maxWaitMs, beat: () => context.heartbeat(), signal: context.cancellationSignal,
      });
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
