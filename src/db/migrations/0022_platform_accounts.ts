import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Platform accounts (docs/ACCOUNTS.md): a customer's fiat balance held by the platform, one per
    -- customer and currency. The balance lives in the ledger: the account's customer_funds account
    -- (available) and its account_reserved account (what its open transfers have reserved).
    create table platform_accounts (
      id text primary key,
      developer_id text not null,
      environment text not null,
      customer_id text not null references customers (id),
      currency text not null,
      status text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (developer_id, environment, customer_id, currency)
    );
    create index platform_accounts_tenant on platform_accounts (developer_id, environment, created_at, id);

    alter table ledger_accounts drop constraint ledger_accounts_owner_type_check;
    alter table ledger_accounts add constraint ledger_accounts_owner_type_check
      check (owner_type in ('customer', 'developer', 'platform', 'account'));
    alter table ledger_accounts drop constraint ledger_accounts_purpose_check;
    alter table ledger_accounts add constraint ledger_accounts_purpose_check
      check (purpose in ('customer_funds', 'rail_clearing', 'chain_treasury', 'platform_fees', 'developer_fees', 'fx_conversion',
                         'unapplied_deposits', 'account_reserved'));

    alter table transfers add column destination_account_id text references platform_accounts (id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table transfers drop column destination_account_id;
    drop table platform_accounts;
  `.execute(db);
}
