import type { Compilable, Kysely, Transaction } from 'kysely';
import type { Tenant } from '../db/tenant-scope';
import type { Database, EventRow } from '../db/schema';
import { newId } from '../ids';
import { insertEventsWithDeliveries, type AllOrNothing } from '../webhooks/fan-out';
import type { EventType } from './event-catalogue';

/** The condition of a change made with a guarded one (recordEventsIfChanged). */
export { changeMade, isStatementAborted, type AllOrNothing } from '../webhooks/fan-out';

/**
 * The outbox: every state change writes its event in the same transaction as the change, so an
 * event exists exactly when the change committed. Webhook delivery reads from this table.
 */
export async function recordEvent(
  trx: Kysely<Database> | Transaction<Database>,
  tenant: Tenant,
  e: OutboxEvent,
  at = new Date(),
): Promise<string> {
  const [id] = await recordEvents(trx, tenant, [{ ...e, at }]);
  return id!;
}

/**
 * A change that is one data-modifying query (an insert, say) and its event, as one SQL statement:
 * atomic without a transaction of its own, so a route can write it in one round trip.
 */
export async function recordChangeWithEvent(db: Kysely<Database> | Transaction<Database>, tenant: Tenant, change: Compilable, e: OutboxEvent, at = new Date()): Promise<string> {
  const [id] = await recordEvents(db, tenant, [{ ...e, at }], change);
  return id!;
}

export interface OutboxEvent {
  /** A name of the catalogue (src/domain/event-catalogue.ts). */
  type: EventType;
  objectId: string;
  data: object;
  previousAttributes?: Record<string, unknown>;
}

/** Several events in one statement (with their webhook deliveries; same transaction), each at its own time. Answers their ids, in order. */
export async function recordEvents(
  trx: Kysely<Database> | Transaction<Database>, tenant: Tenant, events: (OutboxEvent & { at: Date })[], change?: Compilable,
): Promise<string[]> {
  const rows = events.map(outboxRow);
  // The events and their webhook deliveries: one statement, in the caller's transaction.
  await insertEventsWithDeliveries(trx, tenant, rows, new Date(), change);
  return rows.map((e) => e.id);
}

/**
 * A conditional change (its RETURNING names what it changed), the changes made with it (`alongside`,
 * each conditioned on `changeMade`) and its events: one statement, all or nothing. Answers whether
 * the change was made.
 */
export async function recordEventsIfChanged(
  db: Kysely<Database> | Transaction<Database>, tenant: Tenant, events: (OutboxEvent & { at: Date })[], change: Compilable, alongside: Compilable[] = [],
  allOrNothing?: AllOrNothing,
): Promise<boolean> {
  return insertEventsWithDeliveries(db, tenant, events.map(outboxRow), new Date(), change, { alongside, allOrNothing });
}

function outboxRow(e: OutboxEvent & { at: Date }) {
  return {
    id: newId('event', e.at.getTime()), type: e.type, object_id: e.objectId, data: JSON.stringify(e.data),
    previous_attributes: e.previousAttributes ? JSON.stringify(e.previousAttributes) : null, created_at: e.at,
  };
}

/** An event as developers see it, in `GET /v0/events` and in webhook payloads (docs/WEBHOOKS.md). */
export function serializeEvent(row: EventRow) {
  return {
    id: row.id,
    object: 'event' as const,
    event: row.type,
    api_version: 'v0' as const,
    created_at: row.created_at.toISOString(),
    // An event never changes once made.
    updated_at: row.created_at.toISOString(),
    data: { ...row.data, ...(row.previous_attributes ? { previous_attributes: row.previous_attributes } : {}) },
  };
}

/** The attributes of `before` that differ from `after`, with their old values. */
export function changedAttributes(before: Record<string, unknown>, after: Record<string, unknown>) {
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(after)) {
    if (key === 'updated_at') continue;
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) previous[key] = before[key] ?? null;
  }
  return previous;
}
