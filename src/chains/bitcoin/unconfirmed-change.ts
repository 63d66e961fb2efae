import { hex } from '@scure/base';
import { Address, OutScript, Transaction } from '@scure/btc-signer';
import type { Kysely, Transaction as DbTransaction } from 'kysely';
import type { Database } from '../../db/schema';
import type { Coin, CoinOwner } from './coin';
import type { BitcoinNetwork } from './keys';

// The change of the platform's and wallets' own transactions, spendable before a block holds it
// (bitcoin_unconfirmed_change, docs/WALLETS.md): one coin pays many payments in one block, each
// spend a child of the one before, as Bitcoin Core's wallet spends its own change.

/** Unconfirmed transactions a chain may hold, the last included: a node's ancestor limit (Bitcoin Core's 25). */
export const MAX_UNCONFIRMED_CHAIN = 25;

/** The owner's unconfirmed change no signed transaction holds, shallow enough for a child; locked until the caller's transaction ends. */
export async function freeUnconfirmedChange(trx: DbTransaction<Database>, owner: CoinOwner): Promise<Coin[]> {
  let query = trx.selectFrom('bitcoin_unconfirmed_change').select(['txid', 'vout', 'address', 'amount_sats', 'key_index', 'depth'])
    .where('owner', '=', owner.owner).where('reserved_by', 'is', null).where('depth', '<', MAX_UNCONFIRMED_CHAIN);
  if (owner.owner === 'wallet') query = query.where('wallet_id', '=', owner.walletId);
  const rows = await query.orderBy('amount_sats', 'desc').limit(100).forUpdate().execute();
  return rows.map((r) => ({ txid: r.txid, vout: r.vout, address: r.address, amountSats: BigInt(r.amount_sats), keyIndex: r.key_index, depth: r.depth }));
}

/** The unconfirmed change a signed transaction holds (its key). */
export async function reservedUnconfirmedChange(trx: DbTransaction<Database>, key: string): Promise<Coin[]> {
  const rows = await trx.selectFrom('bitcoin_unconfirmed_change').select(['txid', 'vout', 'address', 'amount_sats', 'key_index', 'depth'])
    .where('reserved_by', '=', key).forUpdate().execute();
  return rows.map((r) => ({ txid: r.txid, vout: r.vout, address: r.address, amountSats: BigInt(r.amount_sats), keyIndex: r.key_index, depth: r.depth }));
}

/**
 * Records the change of a transaction just signed under `key` (replacing what an earlier signature
 * of the same key made), one deeper than the deepest unconfirmed coin it spends.
 */
export async function recordUnconfirmedChange(trx: DbTransaction<Database>, key: string, q: {
  raw: string; txid: string; network: BitcoinNetwork; changeAddress: string; owner: CoinOwner; changeKeyIndex: number | null; spent: Coin[];
}): Promise<void> {
  await trx.deleteFrom('bitcoin_unconfirmed_change').where('made_by', '=', key).where('reserved_by', 'is', null).execute();
  const tx = Transaction.fromRaw(hex.decode(q.raw), { allowUnknownOutputs: true });
  const addressOf = Address(q.network);
  const depth = 1 + Math.max(0, ...q.spent.map((c) => c.depth));
  for (let vout = 0; vout < tx.outputsLength; vout++) {
    const out = tx.getOutput(vout);
    if (addressOf.encode(OutScript.decode(out.script!)) !== q.changeAddress) continue;
    await trx.insertInto('bitcoin_unconfirmed_change').values({
      txid: q.txid, vout, address: q.changeAddress, amount_sats: out.amount!.toString(), owner: q.owner.owner,
      wallet_id: q.owner.owner === 'wallet' ? q.owner.walletId : null, key_index: q.changeKeyIndex, depth, made_by: key, reserved_by: null,
    }).execute();
  }
}

/** Whether the transaction signed under `key` spends unconfirmed change, or its own change is spent already: then it is never replaced. */
export async function hasUnconfirmedRelatives(db: Kysely<Database>, key: string): Promise<boolean> {
  const row = await db.selectFrom('bitcoin_unconfirmed_change').select('txid')
    .where((eb) => eb.or([eb('reserved_by', '=', key), eb.and([eb('made_by', '=', key), eb('reserved_by', 'is not', null)])])).executeTakeFirst();
  return row !== undefined;
}

/** Whether the owner has signed transactions out whose coins a block has not spent yet: their change is still to come. */
export async function hasSpendsInFlight(trx: DbTransaction<Database>, owner: CoinOwner): Promise<boolean> {
  let query = trx.selectFrom('bitcoin_outputs').select('txid').where('owner', '=', owner.owner).where('reserved_by', 'is not', null).where('spent_txid', 'is', null);
  if (owner.owner === 'wallet') query = query.where('wallet_id', '=', owner.walletId);
  if (await query.executeTakeFirst()) return true;
  let pending = trx.selectFrom('bitcoin_unconfirmed_change').select('txid').where('owner', '=', owner.owner);
  if (owner.owner === 'wallet') pending = pending.where('wallet_id', '=', owner.walletId);
  return (await pending.executeTakeFirst()) !== undefined;
}

/** A block's transactions read by the index: their change moves to bitcoin_outputs, keeping who holds it. */
export async function confirmUnconfirmedChange(trx: DbTransaction<Database>, txids: string[]): Promise<void> {
  if (txids.length === 0) return;
  const moved = await trx.deleteFrom('bitcoin_unconfirmed_change').where('txid', 'in', txids).where('reserved_by', 'is not', null)
    .returning(['txid', 'vout', 'reserved_by']).execute();
  for (const m of moved) {
    await trx.updateTable('bitcoin_outputs').set({ reserved_by: m.reserved_by }).where('txid', '=', m.txid).where('vout', '=', m.vout).execute();
  }
  await trx.deleteFrom('bitcoin_unconfirmed_change').where('txid', 'in', txids).execute();
}
