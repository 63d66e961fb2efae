import type { Db } from '../../db';
import { recordMinedTransaction, signedTransactionOf, storeSignedTransaction } from '../../payments/store';
import { markSwept, startSweep, storeSweepTransaction, sweepByKey } from '../../payments/sweeps';
import { claimWalletTransaction, storedWalletTransaction, storeWalletTransaction } from '../../payments/wallet-signed-transactions';
import { PayoutRejectedError, type PayoutStatus, type SweepStatus } from '../chain-adapter';
import { errorText, signatureOf, type SolanaNode } from './node';
import type { SignedSolanaTransaction } from './transactions';

// Transactions the platform sends on Solana (payouts, refunds, sweeps, wallet sends): each is signed,
// stored before it is broadcast, and only ever replaced by a new signature once the stored one can
// no longer land (its blockhash expired and the cluster never took it), so a payment moves once.

type Landed = { signature: string; err: unknown; counted: boolean };

/** Where one payment's signed transaction is kept: its table's row, read, and replaced under a lock. */
interface TransactionSlot {
  /** The transaction stored, with its signature first and then those of the transactions it replaced. */
  read(): Promise<{ wire: string; signatures: string[] } | undefined>;
  /**
   * In one database transaction: stores `next` in place of `replacing` (null: nothing stored yet),
   * unless another attempt stored other bytes meanwhile; answers what the slot holds then.
   */
  replace(next: SignedSolanaTransaction, replacing: string | null): Promise<SignedSolanaTransaction>;
}

/** Which of `signatures` the cluster took, if any, and whether it is deep enough to count. */
async function landedOf(node: SolanaNode, signatures: string[]): Promise<Landed | undefined> {
  for (const signature of signatures) {
    const status = await node.signatureStatus(signature);
    if (!status) continue;
    const counted = status.confirmationStatus === 'finalized' || (node.commitment === 'confirmed' && status.confirmationStatus === 'confirmed');
    return { signature, err: status.err, counted };
  }
  return undefined;
}

/**
 * The slot's transaction on its way: signed (`sign`) and stored before it is first sent; sent again
 * while the cluster has not taken it and its blockhash is valid; once that expired, signed anew
 * (`resign`, from the stored bytes), stored and sent. Answers the signature now out, the
 * transaction the cluster took, if it took one, and the signatures stored before this call.
 */
async function sendOnce(
  node: SolanaNode, slot: TransactionSlot, sign: () => Promise<SignedSolanaTransaction>, resign: (stored: string) => Promise<SignedSolanaTransaction>,
): Promise<{ signature: string; landed?: Landed; storedSignatures?: string[] }> {
  const stored = await slot.read();
  if (!stored) {
    const kept = await slot.replace(await sign(), null);
    await node.broadcast(kept.wire);
    return { signature: kept.signature };
  }
  const landed = await landedOf(node, stored.signatures);
  if (landed) return { signature: landed.signature, landed, storedSignatures: stored.signatures };
  if (await node.canStillLand(stored.wire)) {
    await node.broadcast(stored.wire);
    return { signature: stored.signatures[0]! };
  }
  const next = await slot.replace(await resign(stored.wire), stored.wire);
  await node.broadcast(next.wire);
  return { signature: next.signature };
}

/** A payout's transaction, on its payment (`payments.signed_transaction`; the replaced ones in `replaced_tx_hashes`). */
function paymentSlot(db: Db, key: string): TransactionSlot {
  const signaturesOf = (row: { tx_hash: string | null; replaced_tx_hashes: unknown }) => [row.tx_hash!, ...((row.replaced_tx_hashes as string[] | null) ?? [])];
  return {
    read: async () => {
      const row = await signedTransactionOf(db, key);
      return row.signed_transaction ? { wire: row.signed_transaction, signatures: signaturesOf(row) } : undefined;
    },
    replace: (next, replacing) => db.transaction().execute(async (trx) => {
      const row = await signedTransactionOf(trx, key, { forUpdate: true });
      if (row.signed_transaction !== replacing) return { wire: row.signed_transaction!, signature: row.tx_hash! };
      await storeSignedTransaction(trx, key, next.wire, next.signature, replacing === null ? undefined : signaturesOf(row));
      return next;
    }),
  };
}

/** A sweep's transaction (`chain_sweeps`). */
function sweepSlot(db: Db, sweepKey: string): TransactionSlot {
  return {
    read: async () => {
      const row = await sweepByKey(db, sweepKey);
      return row.sweep_signed_transaction ? { wire: row.sweep_signed_transaction, signatures: [row.sweep_tx_hash!] } : undefined;
    },
    replace: (next, replacing) => db.transaction().execute(async (trx) => {
      const row = await sweepByKey(trx, sweepKey, { forUpdate: true });
      if (row.sweep_signed_transaction !== replacing) return { wire: row.sweep_signed_transaction!, signature: row.sweep_tx_hash! };
      await storeSweepTransaction(trx, sweepKey, 'sweep', next.wire, next.signature);
      return next;
    }),
  };
}

/** A transaction a wallet's own key signed (`wallet_signed_transactions`). */
function walletSlot(db: Db, q: { key: string; walletId: string; transferId: string | null }): TransactionSlot {
  return {
    read: async () => {
      const wire = await storedWalletTransaction(db, q.key);
      return wire ? { wire, signatures: [signatureOf(wire)] } : undefined;
    },
    replace: (next, replacing) => db.transaction().execute(async (trx) => {
      const stored = await claimWalletTransaction(trx, q.key, { walletId: q.walletId, transferId: q.transferId, chain: 'solana' });
      if (stored !== replacing) return { wire: stored!, signature: signatureOf(stored!) };
      await storeWalletTransaction(trx, q.key, next.wire, next.signature);
      return next;
    }),
  };
}

/**
 * Payouts, stored on their payment. `resign` signs a stored transaction's instructions again on a
 * fresh blockhash.
 */
export class SolanaPaymentSends {
  constructor(private readonly node: SolanaNode, private readonly db: Db, private readonly resign: (stored: string) => Promise<SignedSolanaTransaction>) {}

  /** Signs (once), stores and sends; a repeat re-sends the stored transaction. */
  async send(key: string, sign: () => Promise<SignedSolanaTransaction>): Promise<{ txHash: string }> {
    return { txHash: (await sendOnce(this.node, paymentSlot(this.db, key), sign, this.resign)).signature };
  }

  /** Pending until the transaction is deep enough; then confirmed (with its fee) or failed. */
  async status(key: string, feeOf: (signature: string) => Promise<bigint>): Promise<PayoutStatus> {
    const { signature, landed, storedSignatures = [] } = await sendOnce(
      this.node, paymentSlot(this.db, key), () => Promise.reject(new Error(`payment ${key} was never signed`)), this.resign,
    );
    if (!landed) return { status: 'pending', txHash: signature };
    // An earlier transaction won: the payment names the one the cluster took.
    if (landed.signature !== storedSignatures[0]) {
      await recordMinedTransaction(this.db, key, landed.signature, storedSignatures.filter((s) => s !== landed.signature));
    }
    if (!landed.counted) return { status: 'pending', txHash: landed.signature };
    if (landed.err) return { status: 'failed', txHash: landed.signature, reason: `the transaction failed on chain: ${JSON.stringify(landed.err)}` };
    return { status: 'confirmed', txHash: landed.signature, networkFee: (await feeOf(landed.signature)).toString(), nativeAsset: 'sol' };
  }
}

/** A sweep of a deposit address into the treasury, one step per call: pending until its transaction counts. */
export async function sweepOnce(
  node: SolanaNode, db: Db, q: { sweepKey: string; transferId: string; currency: string; from: string; amountMinor: bigint }, sign: () => Promise<SignedSolanaTransaction>,
): Promise<SweepStatus> {
  const row = await startSweep(db, {
    sweep_key: q.sweepKey, transfer_id: q.transferId, chain: 'solana', currency: q.currency, from_address: q.from, amount_minor: q.amountMinor.toString(),
  });
  if (row.status === 'swept') return { status: 'swept', txHash: row.sweep_tx_hash };
  const { landed } = await sendOnce(node, sweepSlot(db, q.sweepKey), sign, () => sign());
  if (!landed?.counted) return { status: 'pending' };
  if (landed.err) throw new Error(`the sweep ${q.sweepKey} (${landed.signature}) failed on chain: ${JSON.stringify(landed.err)}`);
  await markSwept(db, q.sweepKey);
  return { status: 'swept', txHash: landed.signature };
}

/**
 * A token transfer signed by a wallet's own key: signed once, stored, sent; signed anew only once it
 * can no longer land. A cluster that refuses it because the wallet holds too little (the token
 * program's InsufficientFunds) has refused the send for good: PayoutRejectedError, never a retry.
 */
export async function walletSendOnce(
  node: SolanaNode, db: Db, q: { key: string; walletId: string; transferId: string | null }, sign: () => Promise<SignedSolanaTransaction>,
): Promise<{ txHash: string }> {
  try {
    return { txHash: (await sendOnce(node, walletSlot(db, q), sign, () => sign())).signature };
  } catch (err) {
    if (isInsufficientFunds(err)) throw new PayoutRejectedError(`the wallet holds too little to send it on solana: ${errorText(err).slice(0, 300)}`);
    throw err;
  }
}

/** The token program's error 1 (InsufficientFunds), or the runtime's lack of lamports, in a preflight refusal. */
export function isInsufficientFunds(err: unknown): boolean {
  return /"Custom":1\b|custom program error: 0x1\b|insufficient funds|InsufficientFunds/i.test(errorText(err));
}
