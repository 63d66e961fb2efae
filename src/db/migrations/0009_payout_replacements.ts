import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Chain payouts re-signed with a higher fee (same nonce: at most one of them is mined):
    -- the hashes of the transactions they replaced, oldest first.
    alter table payments add column replaced_tx_hashes jsonb
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table payments drop column replaced_tx_hashes`.execute(db);
}
