import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Every wallet address, for the one watcher per chain to match token transfers against (an EVM
    -- address lower-cased). A wallet has one row per chain it holds.
    create table wallet_addresses (
      chain text not null,
      address text not null,
      wallet_id text not null references wallets (id),
      primary key (chain, address)
    );
    insert into wallet_addresses (chain, address, wallet_id)
      select a.key, case when a.value like '0x%' then lower(a.value) else a.value end, w.id
      from wallets w, jsonb_each_text(w.addresses) a;

    -- Where each chain's wallet watcher reads on from (a block number, or a time on the simulators);
    -- written first by the wallet's creation, with the chain's position before it.
    create table chain_watch_cursors (
      chain text primary key,
      position text not null,
      updated_at timestamptz not null
    );

    -- A token transfer into or out of a wallet, as the watcher saw it on chain: pending until deep
    -- enough, then confirmed (or dropped, when a reorganisation took it away).
    create table wallet_transactions (
      id text primary key,
      developer_id text not null,
      environment text not null,
      wallet_id text not null references wallets (id),
      chain text not null,
      currency text not null,
      direction text not null,
      amount_minor numeric(78, 0) not null,
      tx_hash text not null,
      transfer_ref text not null,
      counterparty text not null,
      position text not null,
      confirmations integer not null,
      state text not null,
      transfer_id text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      unique (chain, transfer_ref, wallet_id, direction)
    );
    create index wallet_transactions_wallet on wallet_transactions (wallet_id, created_at, id);
    create index wallet_transactions_pending on wallet_transactions (chain) where state = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table wallet_transactions; drop table chain_watch_cursors; drop table wallet_addresses`.execute(db);
}
