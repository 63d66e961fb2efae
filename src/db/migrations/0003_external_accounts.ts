import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table external_accounts (
      id text primary key,
      developer_id text not null,
      environment text not null,
      customer_id text not null references customers(id),
      type text not null check (type in ('us_bank_account', 'international_bank_account', 'mx_bank_account', 'crypto_address')),
      status text not null check (status in ('pending_verification', 'verified', 'verification_failed', 'active', 'deleted')),
      account_name text,
      account_type text,
      routing_number text,
      bank_name text,
      bank_country text,
      bic text,
      chain text,
      address text,
      label text,
      number_encrypted text,
      last4 text,
      fingerprint text not null,
      failure_reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      deleted_at timestamptz
    );
    -- One live link per account and customer; a deleted link may be made again.
    create unique index external_accounts_live_fingerprint on external_accounts (customer_id, fingerprint) where status <> 'deleted';
    create index external_accounts_tenant_order on external_accounts (developer_id, environment, created_at desc, id desc);
    create index external_accounts_customer on external_accounts (customer_id, created_at desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table external_accounts`.execute(db);
}
