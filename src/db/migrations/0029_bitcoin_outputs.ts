import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- The blocks the Bitcoin output index has read (src/chains/bitcoin/output-index.ts), by height:
    -- a block whose hash the node no longer has at its height was taken away by a reorganisation.
    create table bitcoin_blocks (
      height integer primary key,
      hash text not null
    );

    -- Outputs the platform cares about: those paying one of its addresses (the treasury, a deposit
    -- address, a wallet, the sandbox's faucet), and every output of a transaction that spends one.
    -- owner says whose coins they are: 'platform' (treasury and deposit addresses), 'faucet',
    -- 'wallet' (wallet_id), or 'external'. reserved_by is the key of the signed transaction that
    -- spends it (taken in the transaction that stores those bytes); spent_txid the one a block shows.
    create table bitcoin_outputs (
      txid text not null,
      vout integer not null,
      address text not null,
      amount_sats numeric(20, 0) not null,
      height integer not null,
      owner text not null check (owner in ('platform', 'faucet', 'wallet', 'external')),
      wallet_id text,
      key_index integer,
      from_address text,
      coinbase boolean not null,
      -- Paid by a transaction that spent this owner's coins (change): spendable at one confirmation.
      own_change boolean not null,
      reserved_by text,
      spent_txid text,
      spent_height integer,
      primary key (txid, vout)
    );
    create index bitcoin_outputs_unspent on bitcoin_outputs (owner, wallet_id, height) where spent_txid is null and owner <> 'external';
    create index bitcoin_outputs_address on bitcoin_outputs (address, height);
    create index bitcoin_outputs_height on bitcoin_outputs (height);
    create index bitcoin_outputs_spent_height on bitcoin_outputs (spent_height) where spent_height is not null;

    -- The index asks which of a block's addresses are deposit addresses, in one indexed query.
    create index transfers_bitcoin_deposit_address on transfers (deposit_address) where source_rail = 'bitcoin';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index transfers_bitcoin_deposit_address; drop table bitcoin_outputs; drop table bitcoin_blocks`.execute(db);
}
