import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Customers' wallets (docs/WALLETS.md). A custodial wallet has one secp256k1 key: one address on
    -- every EVM chain; the private key is sealed (envelope encryption) under the KEK named in kek_id.
    create table wallets (
      id text primary key,
      developer_id text not null,
      environment text not null,
      customer_id text not null references customers (id),
      type text not null,
      label text,
      chains jsonb not null,
      addresses jsonb not null,
      key_sealed text not null,
      kek_id text not null,
      status text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index wallets_tenant on wallets (developer_id, environment, id);
    create index wallets_customer on wallets (customer_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table wallets`.execute(db);
}
