import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The name of the account holder who sent a deposit, as the provider reports it (PII: DataCipher).
    -- Screened before the money goes back to them.
    alter table rail_events add column sender_encrypted text;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table rail_events drop column sender_encrypted`.execute(db);
}
