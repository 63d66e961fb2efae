import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A virtual account's deposit is a payment the rail's provider reported (rail_events): its id,
    -- which the deposit's transfer records as its deposit payment.
    alter table route_deposits add column provider_payment_id text;

    -- A route's own limits in its source currency (src/payment-routes/limits.ts): a deposit above
    -- one is held in review. Null: no limit.
    alter table payment_routes add column limit_per_deposit_minor numeric(78, 0);
    alter table payment_routes add column limit_per_day_minor numeric(78, 0);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table payment_routes drop column limit_per_day_minor;
    alter table payment_routes drop column limit_per_deposit_minor;
    alter table route_deposits drop column provider_payment_id;
  `.execute(db);
}
