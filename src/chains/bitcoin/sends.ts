import { hex } from '@scure/base';
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db';
import type { Database } from '../../db/schema';
import { recordMinedTransaction, signedTransactionOf, storeSignedTransaction } from '../../payments/store';
import { claimWalletTransaction, storedWalletTransaction, storeWalletTransaction } from '../../payments/wallet-signed-transactions';
import { PayoutRejectedError, type PayoutStatus } from '../chain-adapter';
import type { SignedBitcoinTransaction, SpendContext } from './coins';
import { releaseCoins } from './coins';
import { hasUnconfirmedRelatives } from './unconfirmed-change';
import { BitcoinRpcError, type BitcoinRpc } from './rpc';

// Transactions the platform sends on Bitcoin (payouts, refunds, stray returns, wallet sends): each is
// signed, stored with the coins it spends held under its key, and only then broadcast; a repeat
// broadcasts the stored bytes. A payout left out of blocks too long is replaced by one spending the
// same coins at a higher fee (BIP-125), so whichever is mined, the payment moves once.

/** Codes a node answers for a transaction it will not take (rule or policy), as opposed to being unreachable. */
const REFUSED = new Set([-25, -26]);

/** Broadcasts a transaction signed just now; when the node refuses it, its coins are let go and nothing was sent. */
export async function broadcastNew(db: Db, rpc: BitcoinRpc, key: string, raw: string, forget: (trx: Transaction<Database>) => Promise<void>) {
  try {
    await rpc.sendRawTransaction(hex.decode(raw));
  } catch (err) {
    if (!(err instanceof BitcoinRpcError && REFUSED.has(err.code))) throw err;
    await db.transaction().execute(async (trx) => {
      await releaseCoins(trx, key);
      await forget(trx);
    });
    throw new PayoutRejectedError(`the bitcoin node refused the transaction: ${err.message}`);
  }
}

/** Where a payment's transaction landed: the one of its signatures a block holds, at which height. */
async function minedOf(db: Db, txids: string[]): Promise<{ txid: string; height: number } | undefined> {
  return db.selectFrom('bitcoin_outputs').select(['txid', 'height']).where('txid', 'in', txids).orderBy('height').executeTakeFirst();
}

/** What a mined transaction paid in fees: the coins it spent less its outputs, as the index holds them. */
async function feeOf(db: Db, txid: string): Promise<bigint> {
  const { rows } = await sql<{ fee: string }>`
    select coalesce((select sum(amount_sats) from bitcoin_outputs where spent_txid = ${txid}), 0)
         - coalesce((select sum(amount_sats) from bitcoin_outputs where txid = ${txid}), 0) as fee`.execute(db);
  return BigInt(rows[0]!.fee);
}

export interface PaymentSendsDeps {
  db: Db;
  rpc: BitcoinRpc;
  confirmations: number;
  rbfAfterMs: number;
  /** Brings the output index to the node's tip; answers the height it reached. */
  sync: () => Promise<number>;
  /** The tip and fee rate a replacement is built against, read before its database transaction. */
  context: () => Promise<SpendContext>;
  /** Signs a replacement for the stored transaction (same coins and payees, a higher fee), holding its coins under `key`; undefined at the fee ceiling. */
  replace: (trx: Transaction<Database>, key: string, stored: string, at: SpendContext) => Promise<SignedBitcoinTransaction | undefined>;
}

/** Payouts, stored on their payment (`payments.signed_transaction`; replaced ones in `replaced_tx_hashes`). */
export class BitcoinPaymentSends {
  constructor(private readonly deps: PaymentSendsDeps) {}

  /** Signs (once, with `sign`), stores and sends; a repeat re-sends the stored transaction. */
  async send(key: string, sign: (trx: Transaction<Database>) => Promise<SignedBitcoinTransaction>): Promise<{ txHash: string }> {
    const { db, rpc } = this.deps;
    const stored = await signedTransactionOf(db, key);
    if (stored.signed_transaction) {
      if (!(await minedOf(db, this.signaturesOf(stored)))) await rpc.sendRawTransaction(hex.decode(stored.signed_transaction));
      return { txHash: stored.tx_hash! };
    }
    const signed = await db.transaction().execute(async (trx) => {
      const locked = await signedTransactionOf(trx, key, { forUpdate: true });
      if (locked.signed_transaction) return { raw: locked.signed_transaction, txid: locked.tx_hash!, fresh: false };
      const s = await sign(trx);
      await storeSignedTransaction(trx, key, s.raw, s.txid);
      return { ...s, fresh: true };
    });
    if (signed.fresh) {
      await broadcastNew(db, rpc, key, signed.raw, async (trx) => {
        await trx.updateTable('payments').set({ signed_transaction: null, tx_hash: null }).where('idempotency_key', '=', key).execute();
      });
    } else {
      await rpc.sendRawTransaction(hex.decode(signed.raw));
    }
    return { txHash: signed.txid };
  }

  private signaturesOf(row: { tx_hash: string | null; replaced_tx_hashes: unknown }): string[] {
    return [row.tx_hash!, ...((row.replaced_tx_hashes as string[] | null) ?? [])];
  }

  /** Pending until a block holds one of its transactions `confirmations` deep; replaced at a higher fee while none does for too long. */
  async status(key: string): Promise<PayoutStatus> {
    const { db, rpc } = this.deps;
    const tip = await this.deps.sync();
    const row = await db.selectFrom('payments').select(['signed_transaction', 'tx_hash', 'replaced_tx_hashes', 'updated_at']).where('idempotency_key', '=', key).executeTakeFirstOrThrow();
    if (!row.signed_transaction) throw new Error(`payment ${key} was never signed`);
    const signatures = this.signaturesOf(row);
    const mined = await minedOf(db, signatures);
    if (mined) {
      // A transaction it replaced was mined after all: the payment names the one a block holds.
      if (mined.txid !== row.tx_hash) {
        await recordMinedTransaction(db, key, mined.txid, signatures.filter((s) => s !== mined.txid));
        // The change the replacement would have made never comes.
        await db.deleteFrom('bitcoin_unconfirmed_change').where('made_by', '=', key).where('txid', '<>', mined.txid).execute();
      }
      if (tip - mined.height + 1 < this.deps.confirmations) return { status: 'pending', txHash: mined.txid };
      return { status: 'confirmed', txHash: mined.txid, networkFee: (await feeOf(db, mined.txid)).toString(), nativeAsset: 'btc' };
    }
    // A transaction in a chain of unconfirmed change is never replaced: its children spend its outputs.
    if (Date.now() - row.updated_at.getTime() < this.deps.rbfAfterMs || await hasUnconfirmedRelatives(db, key)) {
      await rpc.sendRawTransaction(hex.decode(row.signed_transaction));
      return { status: 'pending', txHash: row.tx_hash! };
    }
    return { status: 'pending', txHash: await this.bump(key) };
  }

  /**
   * Replaces the stored transaction by one paying a higher fee from the same coins; the earlier one
   * stays in replaced_tx_hashes. At the fee ceiling the stored one is sent again and waits.
   */
  private async bump(key: string): Promise<string> {
    const { db, rpc } = this.deps;
    const at = await this.deps.context();
    const next = await db.transaction().execute(async (trx) => {
      const row = await signedTransactionOf(trx, key, { forUpdate: true });
      const replacement = await this.deps.replace(trx, key, row.signed_transaction!, at);
      if (!replacement) return { raw: row.signed_transaction!, txid: row.tx_hash! };
      await storeSignedTransaction(trx, key, replacement.raw, replacement.txid, this.signaturesOf(row));
      return replacement;
    });
    await rpc.sendRawTransaction(hex.decode(next.raw));
    return next.txid;
  }
}

/** A transaction a wallet's own key signed (`wallet_signed_transactions`): signed once, stored, sent; a repeat re-sends it. */
export async function walletSendOnce(
  deps: { db: Db; rpc: BitcoinRpc }, q: { key: string; walletId: string; transferId: string | null },
  sign: (trx: Transaction<Database>) => Promise<SignedBitcoinTransaction>,
): Promise<{ txHash: string }> {
  const stored = await storedWalletTransaction(deps.db, q.key);
  const signed = stored ? { raw: stored, fresh: false } : await deps.db.transaction().execute(async (trx) => {
    // The wallet's row, shared: a transfer's creation, which checks what the wallet can spend under
    // the row's exclusive lock, sees this send either not yet made or made and stored, never between.
    await trx.selectFrom('wallets').select('id').where('id', '=', q.walletId).forShare().execute();
    const claimed = await claimWalletTransaction(trx, q.key, { walletId: q.walletId, transferId: q.transferId, chain: 'bitcoin' });
    if (claimed) return { raw: claimed, fresh: false };
    const s = await sign(trx);
    await storeWalletTransaction(trx, q.key, s.raw, s.txid);
    return { raw: s.raw, fresh: true };
  });
  const txid = (await deps.db.selectFrom('wallet_signed_transactions').select('tx_hash').where('idempotency_key', '=', q.key).executeTakeFirstOrThrow()).tx_hash!;
  if (signed.fresh) {
    await broadcastNew(deps.db, deps.rpc, q.key, signed.raw, async (trx) => {
      await trx.deleteFrom('wallet_signed_transactions').where('idempotency_key', '=', q.key).execute();
    });
  } else if (!(await minedOf(deps.db, [txid]))) {
    await deps.rpc.sendRawTransaction(hex.decode(signed.raw));
  }
  return { txHash: txid };
}
