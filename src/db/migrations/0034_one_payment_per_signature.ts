import { Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- A signed transaction pays one payment (docs/WALLETS.md, "One transaction, one payment"): a
    -- second payment that signed byte-identical bytes (a Solana payout of the same amount to the same
    -- owner on the same blockhash) would otherwise be marked paid by the first one's signature.
    do $$
    declare
      shared text;
    begin
      select string_agg(tx_hash || ' (' || payments || ')', '; ') into shared from (
        select tx_hash, string_agg(id, ', ' order by id) as payments from payments
        where signed_transaction is not null and tx_hash is not null group by tx_hash having count(*) > 1
      ) d;
      if shared is not null then
        raise exception 'payments that share one signed transaction were paid once, not once each (an operator refunds or pays them again, then clears signed_transaction on all but one): %', shared;
      end if;
    end
    $$;
    create unique index payments_one_per_signature on payments (tx_hash) where signed_transaction is not null;
    create unique index wallet_signed_transactions_one_per_signature on wallet_signed_transactions (chain, tx_hash) where tx_hash is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index payments_one_per_signature; drop index wallet_signed_transactions_one_per_signature`.execute(db);
}
