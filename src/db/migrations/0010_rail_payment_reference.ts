import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The sandbox rails look up a transfer's earlier refunds by its reference.
    create index rail_payments_reference on rail_payments (reference, purpose) where reference is not null
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index rail_payments_reference`.execute(db);
}
