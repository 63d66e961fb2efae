import { sql, type Compilable, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';

/** An event row as the outbox stores it. */
export interface OutboxRow {
  id: string;
  type: string;
  object_id: string;
  data: string;
  previous_attributes: string | null;
  created_at: Date;
}

/**
 * Inserts the events and queues them for every endpoint of their tenant that takes them
 * (`enabled_events` names the type, or `*`): one statement (the events insert is a CTE the
 * deliveries' insert reads), whatever the number of events and endpoints, in the caller's
 * transaction, so an event is delivered exactly when it committed. Disabled and deleted endpoints get
 * nothing; a failing one still gets everything (events are never dropped). Another tenant's
 * endpoints, or the other environment's, never match. A `webhook.test` event goes only to the
 * endpoint it tests (src/webhooks/deliveries.ts).
 */
export async function insertEventsWithDeliveries(
  trx: Kysely<Database> | Transaction<Database>, tenant: Tenant, rows: OutboxRow[], at: Date,
  /** A data-modifying statement run first, in the same statement (the change the events announce). */
  change?: Compilable,
  /**
   * The change is conditional (its RETURNING names what it changed): the events, and `alongside`
   * (more changes, each conditioned on `changeMade`), happen only if it changed something.
   * Answers whether it did.
   */
  guarded?: { alongside: Compilable[]; allOrNothing?: AllOrNothing },
): Promise<boolean> {
  if (rows.length === 0) return false;
  const column = <K extends keyof OutboxRow>(k: K) => sql.val(rows.map((r) => r[k]));
  const alongside = (guarded?.alongside ?? []).map((q, i) => sql`${sql.raw(`alongside_${i}`)} as (${q}), `);
  const all = guarded?.allOrNothing;
  const result = await sql<{ n: number }>`
    with ${change ? sql`change as (${change}), ` : sql``}${sql.join(alongside, sql``)}${all?.ctes ? sql`${all.ctes}, ` : sql``}ev as (
      insert into events (id, developer_id, environment, type, object_id, data, previous_attributes, created_at)
      select e.id, ${tenant.developerId}, ${tenant.environment}, e.type, e.object_id, e.data, e.previous_attributes, e.created_at
      from unnest(${column('id')}::text[], ${column('type')}::text[], ${column('object_id')}::text[], ${column('data')}::jsonb[],
                  ${column('previous_attributes')}::jsonb[], ${column('created_at')}::timestamptz[])
        as e(id, type, object_id, data, previous_attributes, created_at)
      ${guarded ? sql`where ${changeMade}` : sql``}
      returning id, type
    ), deliveries as (
      insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at, created_at)
      select ev.id, w.id, 'pending', ${at}, ${at}
      from ev
      join webhook_endpoints w on w.developer_id = ${tenant.developerId} and w.environment = ${tenant.environment}
        and w.deleted_at is null and w.status <> 'disabled'
        and (w.enabled_events ? '*' or w.enabled_events ? ev.type)
      where ev.type <> 'webhook.test'
      on conflict (event_id, endpoint_id) do nothing
    )
    select ${all ? sql`case when ${changeMade} and ${all.holds} then (select count(*)::int from ev) else abort_statement(${all.reason}) end` : sql`count(*)::int`} as n
    ${all ? sql`` : sql`from ev`}`.execute(trx);
  return result.rows[0]!.n > 0;
}

/**
 * A guarded change whose companions must all be made with it, or none: `alongside` unconditioned,
 * `ctes` more of them (ledger movements), `holds` the condition that they were made. Unless the
 * change was made and `holds` holds, the statement fails with `reason` (SQLSTATE FP001,
 * isStatementAborted) and nothing of it is made.
 */
export interface AllOrNothing {
  ctes?: RawBuilder<unknown>;
  holds: RawBuilder<boolean>;
  reason: string;
}

/** The error of a statement that abort_statement undid (AllOrNothing). */
export const isStatementAborted = (err: unknown) => (err as { code?: string } | null)?.code === 'FP001';

/** The condition a guarded change's companions carry (insertEventsWithDeliveries): the change changed something. */
export const changeMade = sql<boolean>`exists (select 1 from change)`;
