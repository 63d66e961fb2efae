import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Double-entry ledger: every movement is a transaction whose entries sum to zero per currency.
    create table ledger_accounts (
      id text primary key,
      developer_id text not null,
      environment text not null,
      owner_type text not null check (owner_type in ('customer', 'developer', 'platform')),
      owner_id text not null,
      purpose text not null check (purpose in ('customer_funds', 'rail_clearing', 'chain_treasury', 'platform_fees',
        'developer_fees', 'fx_conversion')),
      currency text not null,
      -- Customer funds and fees can never go below zero; clearing, treasury and conversion accounts mirror
      -- the outside world and may.
      allow_negative boolean not null,
      balance_minor numeric(78, 0) not null default 0,
      created_at timestamptz not null,
      unique (developer_id, environment, owner_type, owner_id, purpose, currency)
    );

    create table ledger_transactions (
      id text primary key,
      developer_id text not null,
      environment text not null,
      idempotency_key text not null unique,
      description text not null,
      reference_id text,
      created_at timestamptz not null
    );
    create index ledger_transactions_reference on ledger_transactions (reference_id);

    create table ledger_entries (
      id bigserial primary key,
      transaction_id text not null references ledger_transactions(id),
      account_id text not null references ledger_accounts(id),
      currency text not null,
      amount_minor numeric(78, 0) not null check (amount_minor <> 0),
      created_at timestamptz not null
    );
    create index ledger_entries_account on ledger_entries (account_id, id);
    create index ledger_entries_transaction on ledger_entries (transaction_id);

    -- Entries are immutable: corrections are new, reversing transactions.
    create function ledger_entries_immutable() returns trigger language plpgsql as $$
      begin raise exception 'ledger entries are immutable'; end $$;
    create trigger ledger_entries_no_update before update or delete on ledger_entries
      for each row execute function ledger_entries_immutable();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table ledger_entries, ledger_transactions, ledger_accounts; drop function ledger_entries_immutable()`.execute(db);
}
