import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- Transfers from and to wallets (docs/WALLETS.md): the source wallet signs the deposit; a
    -- destination wallet is paid at its address.
    alter table transfers add column source_wallet_id text references wallets (id);
    alter table transfers add column destination_wallet_id text references wallets (id);
    create index transfers_source_wallet_open on transfers (source_wallet_id) where source_wallet_id is not null and state = 'awaiting_funds';

    -- Each transaction a wallet's key signed, stored before it is broadcast: a retry after a crash
    -- sends these same bytes, which the chain includes at most once.
    create table wallet_signed_transactions (
      idempotency_key text primary key,
      wallet_id text not null references wallets (id),
      transfer_id text,
      chain text not null,
      signed_transaction text,
      tx_hash text,
      created_at timestamptz not null
    );
    create index wallet_signed_transactions_hash on wallet_signed_transactions (chain, tx_hash);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table wallet_signed_transactions;
    alter table transfers drop column source_wallet_id;
    alter table transfers drop column destination_wallet_id;
  `.execute(db);
}
