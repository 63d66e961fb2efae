import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema';

// The one owner of `wallet_signed_transactions`: each transaction a wallet's key signed, stored in
// the database transaction that takes its nonce, before it is broadcast.

type Queryable = Kysely<Database> | Transaction<Database>;

/** The signed bytes stored under this key, or null when nothing is signed yet. */
export async function storedWalletTransaction(q: Queryable, key: string): Promise<string | null> {
  const row = await q.selectFrom('wallet_signed_transactions').select('signed_transaction').where('idempotency_key', '=', key).executeTakeFirst();
  return row?.signed_transaction ?? null;
}

/** Claims the key in `trx` (locked until it commits) and answers what is signed under it already. */
export async function claimWalletTransaction(
  trx: Transaction<Database>, key: string, what: { walletId: string; transferId: string | null; chain: string },
): Promise<string | null> {
  await trx.insertInto('wallet_signed_transactions').values({
    idempotency_key: key, wallet_id: what.walletId, transfer_id: what.transferId, chain: what.chain, signed_transaction: null, tx_hash: null, created_at: new Date(),
  }).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
  const row = await trx.selectFrom('wallet_signed_transactions').select('signed_transaction').where('idempotency_key', '=', key).forUpdate().executeTakeFirstOrThrow();
  return row.signed_transaction;
}

export async function storeWalletTransaction(trx: Transaction<Database>, key: string, signed: string, txHash: string): Promise<void> {
  await trx.updateTable('wallet_signed_transactions').set({ signed_transaction: signed, tx_hash: txHash }).where('idempotency_key', '=', key).execute();
}

/** The transfers these wallet transactions were signed for. */
export async function transfersOfWalletTransactions(q: Queryable, chain: string, txHashes: string[]): Promise<Map<string, string>> {
  if (txHashes.length === 0) return new Map();
  const rows = await q.selectFrom('wallet_signed_transactions').select(['transfer_id', 'tx_hash'])
    .where('chain', '=', chain).where('tx_hash', 'in', txHashes).where('transfer_id', 'is not', null).execute();
  return new Map(rows.map((r) => [r.tx_hash!, r.transfer_id!]));
}
