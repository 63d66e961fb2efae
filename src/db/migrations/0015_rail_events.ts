import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Events a fiat-rail provider sent to its webhook: each handled once (providers deliver at least
    -- once), and kept with what came of it, for operators (money that matched no transfer, say).
    create table rail_events (
      id text primary key,
      type text not null,
      provider_payment_id text not null,
      payload jsonb not null,
      outcome text,
      transfer_id text,
      received_at timestamptz not null,
      handled_at timestamptz
    );
    create index rail_events_outcome on rail_events (outcome, received_at);
    -- A return names the provider's payment.
    create index payments_provider_payment on payments (provider_payment_id) where provider_payment_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table rail_events; drop index payments_provider_payment`.execute(db);
}
