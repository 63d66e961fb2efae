import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A compliance freeze (docs/KYC.md): why, by whom, when, and the status to go back to.
    alter table customers add column suspension jsonb;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table customers drop column suspension`.execute(db);
}
