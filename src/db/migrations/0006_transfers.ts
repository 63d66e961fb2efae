import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A transfer: its state is the read model the transfer workflow writes, one transaction per move.
    create table transfers (
      id text primary key,
      developer_id text not null,
      environment text not null,
      customer_id text not null references customers(id),
      state text not null,
      state_reason text,
      client_reference_id text,
      amount_minor numeric(78, 0) not null check (amount_minor > 0),
      developer_fee_minor numeric(78, 0) not null check (developer_fee_minor >= 0),
      source_rail text not null,
      source_currency text not null,
      source_from_address text,
      source_account_id text,
      destination_rail text not null,
      destination_currency text not null,
      destination_external_account_id text references external_accounts(id),
      destination_to_address text,
      swift_charges text,
      receipt jsonb not null,
      deposit_instructions jsonb not null,
      -- Fiat deposits name this reference; chain deposits go to this address (one per transfer).
      deposit_reference text not null unique,
      deposit_address text,
      -- Chain sources: the block from which deposits to deposit_address count.
      source_position text,
      return_code text,
      review_reasons jsonb,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index transfers_tenant_created on transfers (developer_id, environment, created_at desc, id desc);
    create index transfers_customer on transfers (customer_id, created_at);
    create index transfers_deposit_address on transfers (lower(deposit_address)) where deposit_address is not null;

    -- The rail and chain payments behind transfers: deposits in, payouts out, returns and refunds.
    create table payments (
      id text primary key,
      developer_id text not null,
      environment text not null,
      transfer_id text not null references transfers(id),
      kind text not null check (kind in ('deposit', 'payout', 'return', 'refund')),
      rail text not null,
      currency text not null,
      amount_minor numeric(78, 0) not null check (amount_minor > 0),
      status text not null check (status in ('pending', 'submitted', 'settled', 'failed', 'returned')),
      external_account_id text,
      from_address text,
      to_address text,
      provider_payment_id text,
      tx_hash text,
      -- The signed chain transaction, stored before broadcast: a retry sends these same bytes.
      signed_transaction text,
      network_fee text,
      return_code text,
      failure_reason text,
      attempts integer not null default 0,
      idempotency_key text not null unique,
      settles_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
    create index payments_tenant_created on payments (developer_id, environment, created_at desc, id desc);
    create index payments_transfer on payments (transfer_id, created_at);

    -- Deposit addresses are derived from the platform's HD key, one index per transfer.
    create sequence deposit_address_index start 1;

    -- Next nonce per sending address and chain, taken in the transaction that stores the signed payout.
    create table chain_nonces (
      chain text not null,
      address text not null,
      next_nonce bigint not null,
      primary key (chain, address)
    );

    -- The sandbox rail simulators' books: who the payment is for, and what the sandbox decided.
    alter table rail_payments alter column external_account_id drop not null;
    alter table rail_payments add column reference text;
    alter table rail_payments add column outcome text not null default 'settle' check (outcome in ('settle', 'reject', 'return'));
    alter table rail_payments add column outcome_code text;
    alter table rail_payments add column returned_at timestamptz;

    -- Ledgers of the simulated chains (solana, stellar, tron): transactions as the chain would list them.
    create table simulated_chain_transactions (
      hash text primary key,
      chain text not null,
      currency text not null,
      from_address text not null,
      to_address text not null,
      amount_minor numeric(78, 0) not null,
      idempotency_key text unique,
      created_at timestamptz not null
    );
    create index simulated_chain_transactions_to on simulated_chain_transactions (chain, to_address);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table simulated_chain_transactions, chain_nonces, payments, transfers;
    drop sequence deposit_address_index;
    alter table rail_payments drop column reference, drop column outcome, drop column outcome_code, drop column returned_at;
  `.execute(db);
}
