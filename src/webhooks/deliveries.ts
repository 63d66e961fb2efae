import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import { invalidField } from '../errors';

type Executor = Kysely<Database> | Transaction<Database>;

/** An event's deliveries, each with its attempts, oldest first: what `GET /v0/events/{id}` shows. */
export async function deliveriesOf(db: Executor, eventId: string) {
  const deliveries = await db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).orderBy('id').execute();
  if (deliveries.length === 0) return [];
  const attempts = await db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveries.map((d) => d.id)).orderBy('id').execute();
  return deliveries.map((d) => ({
    webhook_id: d.endpoint_id,
    status: d.status,
    next_attempt_at: d.status === 'pending' ? d.next_attempt_at.toISOString() : null,
    attempts: attempts.filter((a) => a.delivery_id === d.id).map((a) => ({
      attempted_at: a.attempted_at.toISOString(), status_code: a.status_code, error: a.error, duration_ms: a.duration_ms,
    })),
  }));
}

/**
 * Sends an event again, now: to one of the tenant's endpoints (even one it never went to), or to every
 * endpoint it went to. A delivery in flight is sent again too (at least once, the same event id).
 */
export async function redeliver(trx: Executor, tenant: Tenant, eventId: string, webhookId?: string): Promise<number> {
  const now = new Date();
  if (webhookId) {
    const endpoint = await trx.selectFrom('webhook_endpoints').select('id').where('id', '=', webhookId)
      .where('developer_id', '=', tenant.developerId).where('environment', '=', tenant.environment).where('deleted_at', 'is', null).executeTakeFirst();
    if (!endpoint) throw invalidField('body', 'webhook_id', `No such webhook endpoint: '${webhookId}'`);
    await trx.insertInto('webhook_deliveries').values({ event_id: eventId, endpoint_id: endpoint.id, status: 'pending', next_attempt_at: now, last_error: null, created_at: now, delivered_at: null })
      .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doUpdateSet({ status: 'pending', next_attempt_at: now, created_at: now })).execute();
    return 1;
  }
  const updated = await trx.updateTable('webhook_deliveries').set({ status: 'pending', next_attempt_at: now, created_at: now })
    .where('event_id', '=', eventId)
    .where('endpoint_id', 'in', (eb) => eb.selectFrom('webhook_endpoints as w').select('w.id').where('w.deleted_at', 'is', null))
    .executeTakeFirst();
  return Number(updated.numUpdatedRows);
}

/** A `webhook.test` event, queued for this endpoint alone. */
export async function queueTestEvent(trx: Executor, tenant: Tenant, webhookId: string): Promise<void> {
  const eventId = await recordEvent(trx, tenant, { type: 'webhook.test', objectId: webhookId, data: { webhook_id: webhookId } });
  await redeliver(trx, tenant, eventId, webhookId);
}
