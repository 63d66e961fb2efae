import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The name of the account holder who sent a deposit, as the provider reports it (PII: DataCipher).
    -- Screened before the money goes back to them.
    alter table rail_events add column sender_encrypted text;
    -- The return of a stray deposit reads its sender by the provider's payment id.
    create index rail_events_provider_payment on rail_events (provider_payment_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index rail_events_provider_payment; alter table rail_events drop column sender_encrypted`.execute(db);
}
