import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Every resource carries updated_at (spec 2.1); a batch changes as it progresses.
    alter table screening_batches add column updated_at timestamptz;
    update screening_batches set updated_at = coalesce(completed_at, created_at);
    alter table screening_batches alter column updated_at set not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table screening_batches drop column updated_at`.execute(db);
}
