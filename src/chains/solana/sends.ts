import type { Db } from '../../db';
import { recordMinedTransaction, signedTransactionOf, storeSignedTransaction } from '../../payments/store';
import { markSwept, startSweep, storeSweepTransaction, sweepByKey } from '../../payments/sweeps';
import { claimWalletTransaction, storedWalletTransaction, storeWalletTransaction } from '../../wallets/signed-transactions';
import type { PayoutStatus, SweepStatus } from '../chain-adapter';
import { signatureOf, type SolanaNode } from './node';
import type { SignedSolanaTransaction } from './transactions';

// Transactions the platform sends on Solana (payouts, refunds, sweeps, wallet sends): each is signed,
// stored before it is broadcast, and only ever replaced by a new signature once the stored one can
// no longer land (its blockhash expired and the cluster never took it), so a payment moves once.

type Landed = { signature: string; err: unknown; counted: boolean };

/** Which of `signatures` the cluster took, if any, and whether it is deep enough to count. */
export async function landedOf(node: SolanaNode, signatures: string[]): Promise<Landed | undefined> {
  for (const signature of signatures) {
    const status = await node.signatureStatus(signature);
    if (!status) continue;
    const counted = status.confirmationStatus === 'finalized' || (node.commitment === 'confirmed' && status.confirmationStatus === 'confirmed');
    return { signature, err: status.err, counted };
  }
  return undefined;
}

/**
 * A transaction the cluster has not taken: sent again while its blockhash is valid; once it expired,
 * signed anew (`resign`), stored by `store`, and sent. Returns the signature now out.
 */
export async function keepSending(
  node: SolanaNode, stored: string, resign: (stored: string) => Promise<SignedSolanaTransaction>, store: (next: SignedSolanaTransaction) => Promise<SignedSolanaTransaction>,
): Promise<string> {
  if (await node.canStillLand(stored)) {
    await node.broadcast(stored);
    return signatureOf(stored);
  }
  const next = await store(await resign(stored));
  await node.broadcast(next.wire);
  return next.signature;
}

/**
 * Payouts, stored on their payment (`payments.signed_transaction`). `resign` signs a stored
 * transaction's instructions again on a fresh blockhash.
 */
export class SolanaPaymentSends {
  constructor(private readonly node: SolanaNode, private readonly db: Db, private readonly resign: (stored: string) => Promise<SignedSolanaTransaction>) {}

  /** Signs (once), stores and sends; a repeat re-sends the stored transaction. */
  async send(key: string, sign: () => Promise<SignedSolanaTransaction>): Promise<{ txHash: string }> {
    const row = await signedTransactionOf(this.db, key);
    if (row.signed_transaction) {
      if (!(await landedOf(this.node, this.signaturesOf(row)))) await this.keepSending(key, row.signed_transaction);
      return { txHash: (await signedTransactionOf(this.db, key)).tx_hash! };
    }
    const signed = await sign();
    const kept = await this.db.transaction().execute(async (trx) => {
      const locked = await signedTransactionOf(trx, key, { forUpdate: true });
      if (locked.signed_transaction) return { wire: locked.signed_transaction, signature: locked.tx_hash! };
      await storeSignedTransaction(trx, key, signed.wire, signed.signature);
      return signed;
    });
    await this.node.broadcast(kept.wire);
    return { txHash: kept.signature };
  }

  /** Pending until the transaction is deep enough; then confirmed (with its fee) or failed. */
  async status(key: string, feeOf: (signature: string) => Promise<bigint>): Promise<PayoutStatus> {
    const row = await signedTransactionOf(this.db, key);
    if (!row.signed_transaction || !row.tx_hash) throw new Error(`payment ${key} was never signed`);
    const signatures = this.signaturesOf(row);
    const landed = await landedOf(this.node, signatures);
    if (!landed) return { status: 'pending', txHash: await this.keepSending(key, row.signed_transaction) };
    if (landed.signature !== row.tx_hash) await recordMinedTransaction(this.db, key, landed.signature, signatures.filter((s) => s !== landed.signature));
    if (!landed.counted) return { status: 'pending', txHash: landed.signature };
    if (landed.err) return { status: 'failed', txHash: landed.signature, reason: `the transaction failed on chain: ${JSON.stringify(landed.err)}` };
    return { status: 'confirmed', txHash: landed.signature, networkFee: (await feeOf(landed.signature)).toString(), nativeAsset: 'sol' };
  }

  private signaturesOf(row: { tx_hash: string | null; replaced_tx_hashes: unknown }): string[] {
    return [row.tx_hash!, ...((row.replaced_tx_hashes as string[] | null) ?? [])];
  }

  private keepSending(key: string, stored: string) {
    return keepSending(this.node, stored, this.resign, (next) => this.db.transaction().execute(async (trx) => {
      const row = await signedTransactionOf(trx, key, { forUpdate: true });
      if (row.signed_transaction !== stored) return { wire: row.signed_transaction!, signature: row.tx_hash! }; // replaced meanwhile
      await storeSignedTransaction(trx, key, next.wire, next.signature, this.signaturesOf(row));
      return next;
    }));
  }
}

/** Sweeps of deposit addresses into the treasury, stored in `chain_sweeps`. */
export async function sweepOnce(
  node: SolanaNode, db: Db, q: { sweepKey: string; transferId: string; currency: string; from: string; amountMinor: bigint }, sign: () => Promise<SignedSolanaTransaction>,
): Promise<SweepStatus> {
  const row = await startSweep(db, {
    sweep_key: q.sweepKey, transfer_id: q.transferId, chain: 'solana', currency: q.currency, from_address: q.from, amount_minor: q.amountMinor.toString(),
  });
  if (row.status === 'swept') return { status: 'swept', txHash: row.sweep_tx_hash };
  if (row.sweep_signed_transaction) {
    const landed = await landedOf(node, [row.sweep_tx_hash!]);
    if (!landed) {
      await keepSending(node, row.sweep_signed_transaction, () => sign(), (next) => db.transaction().execute(async (trx) => {
        const locked = await sweepByKey(trx, q.sweepKey, { forUpdate: true });
        if (locked.sweep_signed_transaction !== row.sweep_signed_transaction) return { wire: locked.sweep_signed_transaction!, signature: locked.sweep_tx_hash! };
        await storeSweepTransaction(trx, q.sweepKey, 'sweep', next.wire, next.signature);
        return next;
      }));
      return { status: 'pending' };
    }
    if (!landed.counted) return { status: 'pending' };
    if (landed.err) throw new Error(`the sweep ${q.sweepKey} (${landed.signature}) failed on chain: ${JSON.stringify(landed.err)}`);
    await markSwept(db, q.sweepKey);
    return { status: 'swept', txHash: landed.signature };
  }
  const signed = await sign();
  const kept = await db.transaction().execute(async (trx) => {
    const locked = await sweepByKey(trx, q.sweepKey, { forUpdate: true });
    if (locked.sweep_signed_transaction) return { wire: locked.sweep_signed_transaction, signature: locked.sweep_tx_hash! };
    await storeSweepTransaction(trx, q.sweepKey, 'sweep', signed.wire, signed.signature);
    return signed;
  });
  await node.broadcast(kept.wire);
  return { status: 'pending' };
}

/**
 * A token transfer signed by a wallet's own key (`wallet_signed_transactions`): signed once, stored,
 * sent; a repeat sends the stored bytes, or signs anew once they can no longer land.
 */
export async function walletSendOnce(
  node: SolanaNode, db: Db, q: { key: string; walletId: string; transferId: string | null }, sign: () => Promise<SignedSolanaTransaction>,
): Promise<{ txHash: string }> {
  const store = (next: SignedSolanaTransaction, replacing: string | null) => db.transaction().execute(async (trx) => {
    const stored = await claimWalletTransaction(trx, q.key, { walletId: q.walletId, transferId: q.transferId, chain: 'solana' });
    if (stored !== replacing) return { wire: stored!, signature: signatureOf(stored!) }; // signed meanwhile by another attempt
    await storeWalletTransaction(trx, q.key, next.wire, next.signature);
    return next;
  });
  const stored = await storedWalletTransaction(db, q.key);
  if (stored) {
    if (await landedOf(node, [signatureOf(stored)])) return { txHash: signatureOf(stored) };
    return { txHash: await keepSending(node, stored, () => sign(), (next) => store(next, stored)) };
  }
  const kept = await store(await sign(), null);
  await node.broadcast(kept.wire);
  return { txHash: kept.signature };
}
