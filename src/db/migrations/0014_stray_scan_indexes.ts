import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The stray-deposit scan runs every minute: it reads chain transfers of the watch period and the
    -- stray deposits, not the whole tables.
    create index transfers_chain_deposits on transfers (created_at) where deposit_address is not null;
    create index payments_stray_deposits on payments (transfer_id) where kind = 'deposit' and status = 'failed';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index transfers_chain_deposits; drop index payments_stray_deposits`.execute(db);
}
