import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The HD index of a chain transfer's deposit address: its key is needed to sweep the deposit.
    alter table transfers add column deposit_index bigint;

    -- Deposits moved from their one-transfer address into the treasury that pays payouts and refunds.
    -- Both transactions (the treasury's gas for the deposit address, then the token transfer) are
    -- signed and stored here before they are broadcast, so a retry re-sends the same bytes.
    create table chain_sweeps (
      transfer_id text primary key references transfers(id),
      chain text not null,
      currency text not null,
      from_address text not null,
      amount_minor numeric(78, 0) not null,
      gas_signed_transaction text,
      gas_tx_hash text,
      sweep_signed_transaction text,
      sweep_tx_hash text,
      status text not null check (status in ('pending', 'swept')),
      created_at timestamptz not null,
      updated_at timestamptz not null
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table chain_sweeps; alter table transfers drop column deposit_index`.execute(db);
}
