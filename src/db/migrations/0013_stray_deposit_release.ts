import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Each release of a held stray-deposit return: who, why, and what it said before (the audit of an override).
    alter table payments add column operator_releases jsonb;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table payments drop column operator_releases`.execute(db);
}
