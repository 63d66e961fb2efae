import type { Db } from '../db';
import type { RailEventsTable } from '../db/schema';
import type { Selectable } from 'kysely';
import { HANDLED_RAIL_EVENT_OUTCOMES, type RailEventOutcome } from '../resources/transfers/rail-events';

/**
 * The provider's events that need an operator (docs/TRANSFERS.md, *The provider's webhook*): money
 * that funded nothing, returns that reached no workflow, and deliveries never handled; oldest first.
 */
export function railEventsNeedingOperators(db: Db): Promise<Selectable<RailEventsTable>[]> {
  return db.selectFrom('rail_events').selectAll()
    .where('resolved_at', 'is', null)
    .where((eb) => eb.or([eb('outcome', 'is', null), eb('outcome', 'not in', [...HANDLED_RAIL_EVENT_OUTCOMES])]))
    .orderBy('received_at').limit(1000).execute();
}

/** An operator dealt with one (sent the money back through the provider, say): recorded with who and how. */
export async function resolveRailEvent(db: Db, input: { id: string; operator: string; note: string }) {
  const event = await db.selectFrom('rail_events').select(['outcome', 'resolved_at']).where('id', '=', input.id).executeTakeFirst();
  if (!event) throw new Error(`No such rail event: ${input.id}`);
  if (event.outcome && HANDLED_RAIL_EVENT_OUTCOMES.includes(event.outcome as RailEventOutcome)) throw new Error(`${input.id} was handled (${event.outcome}); nothing to resolve`);
  if (event.resolved_at) throw new Error(`${input.id} was resolved already`);
  await db.updateTable('rail_events').set({ resolved_by: input.operator, resolved_note: input.note, resolved_at: new Date() })
    .where('id', '=', input.id).where('resolved_at', 'is', null).execute();
}
