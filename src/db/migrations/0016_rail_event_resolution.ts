import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Who dealt with a rail event that needed an operator (money sent back through the provider, say), and how.
    alter table rail_events add column resolved_by text, add column resolved_note text, add column resolved_at timestamptz;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table rail_events drop column resolved_by, drop column resolved_note, drop column resolved_at`.execute(db);
}
