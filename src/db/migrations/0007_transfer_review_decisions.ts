import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The operator's decision on a transfer held in review: {decision, note, operator, decided_at}.
    -- The audit record of who released (or refused) held money, and when.
    alter table transfers add column review_decision jsonb
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table transfers drop column review_decision`.execute(db);
}
