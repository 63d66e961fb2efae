import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';

/**
 * Queues the events for every endpoint of their tenant that takes them (`enabled_events` names the
 * type, or `*`), in the transaction that writes the events: one statement, whatever the number of
 * endpoints. Disabled and deleted endpoints get nothing; a failing one still gets everything (events
 * are never dropped). Another tenant's endpoints, or the other environment's, never match. A
 * `webhook.test` event goes only to the endpoint it tests (src/webhooks/deliveries.ts).
 */
export async function queueWebhookDeliveries(
  trx: Kysely<Database> | Transaction<Database>, tenant: Tenant, events: { id: string; type: string }[], at: Date,
): Promise<void> {
  if (events.length === 0) return;
  await sql`
    insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at, created_at)
    select e.id, w.id, 'pending', ${at}, ${at}
    from unnest(${sql.val(events.map((e) => e.id))}::text[], ${sql.val(events.map((e) => e.type))}::text[]) as e(id, type)
    join webhook_endpoints w on w.developer_id = ${tenant.developerId} and w.environment = ${tenant.environment}
      and w.deleted_at is null and w.status <> 'disabled'
      and (w.enabled_events ? '*' or w.enabled_events ? e.type)
    where e.type <> 'webhook.test'
    on conflict (event_id, endpoint_id) do nothing`.execute(trx);
}
