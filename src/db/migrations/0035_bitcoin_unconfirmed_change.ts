import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The change of the platform's and wallets' own signed transactions before a block holds them
    -- (docs/WALLETS.md, "Bitcoin: many payments per block"): spendable at once, so one coin pays many
    -- payouts in one block, each spend a child of the one before. depth counts the unconfirmed
    -- transactions up to and including the one that made it (a node takes chains of at most 25).
    -- When the index reads the block holding it, the output moves to bitcoin_outputs with its
    -- reservation, and the row goes.
    create table bitcoin_unconfirmed_change (
      txid text not null,
      vout integer not null,
      address text not null,
      amount_sats numeric(20, 0) not null,
      owner text not null check (owner in ('platform', 'faucet', 'wallet')),
      wallet_id text,
      key_index integer,
      depth integer not null,
      made_by text not null,
      reserved_by text,
      primary key (txid, vout)
    );
    create index bitcoin_unconfirmed_change_free on bitcoin_unconfirmed_change (owner, wallet_id) where reserved_by is null;
    create index bitcoin_unconfirmed_change_made_by on bitcoin_unconfirmed_change (made_by);
    create index bitcoin_unconfirmed_change_reserved_by on bitcoin_unconfirmed_change (reserved_by) where reserved_by is not null;
    create index bitcoin_outputs_reserved_by on bitcoin_outputs (reserved_by) where reserved_by is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table bitcoin_unconfirmed_change; drop index bitcoin_outputs_reserved_by`.execute(db);
}
