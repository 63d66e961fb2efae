import { keccak256, parseTransaction, type Hex, type TransactionReceipt } from 'viem';
import type { Db } from '../../db';
import { recordMinedTransaction, signedTransactionOf, storeSignedTransaction } from '../../payments/store';
import type { PayoutRequest, PayoutStatus } from '../chain-adapter';
import { TOKEN_TRANSFER_GAS, type EvmNode } from './node';
import type { AccountSigner } from './account-signer';

/**
 * Token payouts from the treasury (payouts, refunds, stray-deposit returns). Each is signed here,
 * stored (hash and raw bytes) on its payment in the same transaction that takes the nonce, and only
 * then broadcast: a retried or replayed payout re-sends the identical transaction, which the chain can
 * include at most once.
 */
export class EvmPayouts {
  constructor(private readonly node: EvmNode, private readonly treasury: AccountSigner, private readonly db: Db) {}

  async send(r: PayoutRequest): Promise<{ txHash: string }> {
    let raw = (await signedTransactionOf(this.db, r.idempotencyKey)).signed_transaction as Hex | null;
    if (!raw) {
      // A revert now (a blocked receiver, say) is final: nothing is signed, the payout is undeliverable.
      const { token: to, data } = await this.node.tokenTransfer({ currency: r.currency, from: this.treasury.address, to: r.to, amountMinor: r.amountMinor });
      const prepared = await this.treasury.prepare();
      raw = await this.db.transaction().execute(async (trx) => {
        const row = await signedTransactionOf(trx, r.idempotencyKey, { forUpdate: true });
        if (row.signed_transaction) return row.signed_transaction as Hex;
        const signed = await this.treasury.sign(trx, prepared, { to, data, gas: TOKEN_TRANSFER_GAS });
        await storeSignedTransaction(trx, r.idempotencyKey, signed, keccak256(signed));
        return signed;
      });
    }
    await this.node.broadcast(raw);
    return { txHash: keccak256(raw) };
  }

  async status(idempotencyKey: string): Promise<PayoutStatus> {
    const row = await signedTransactionOf(this.db, idempotencyKey);
    if (!row.signed_transaction || !row.tx_hash) throw new Error(`payout ${idempotencyKey} was never signed`);
    // The payout and any replacements share one nonce: at most one of them is mined.
    const hashes = [row.tx_hash, ...(row.replaced_tx_hashes ?? [])] as Hex[];
    let receipt: TransactionReceipt | null = null;
    for (const hash of hashes) {
      receipt = await this.node.client.getTransactionReceipt({ hash }).catch(() => null);
      if (receipt) break;
    }
    if (!receipt) {
      const { nonce } = parseTransaction(row.signed_transaction as Hex);
      if (await this.node.nonceTakenByAnother(this.treasury.address, nonce!, hashes)) {
        return { status: 'failed', txHash: row.tx_hash as Hex, reason: `nonce ${nonce} of ${this.treasury.address} was used by another transaction: this payout was never mined` };
      }
      return { status: 'pending', txHash: await this.keepMoving(idempotencyKey, row.signed_transaction as Hex) };
    }
    const txHash = receipt.transactionHash;
    // An earlier transaction won: the payment names the one that was mined.
    if (txHash !== row.tx_hash) await recordMinedTransaction(this.db, idempotencyKey, txHash, hashes.filter((h) => h !== txHash));
    // A revert is final only as deep as a success: a reorganised block may mine the same transaction
    // again, and succeed, after its payout was refunded.
    if (!(await this.node.isDeepEnough(receipt))) return { status: 'pending', txHash };
    if (receipt.status === 'reverted') return { status: 'failed', txHash, reason: 'the token contract reverted the transfer' };
    return { status: 'confirmed', txHash, networkFee: (receipt.gasUsed * receipt.effectiveGasPrice).toString(), nativeAsset: this.node.nativeAsset };
  }

  /**
   * A payout not mined yet: sent again if the node lost it (a restart, say); re-signed with the same
   * nonce and a higher fee if its fee cap has fallen under the chain's base fee. Returns the hash of
   * the transaction now out.
   */
  private async keepMoving(idempotencyKey: string, signed: Hex): Promise<Hex> {
    if (!(await this.treasury.isPricedOut(signed))) {
      const hash = keccak256(signed);
      const known = await this.node.client.getTransaction({ hash }).catch(() => null);
      if (!known) await this.node.broadcast(signed);
      return hash;
    }
    const fees = await this.treasury.replacementFees(signed);
    const replacement = await this.db.transaction().execute(async (trx) => {
      const row = await signedTransactionOf(trx, idempotencyKey, { forUpdate: true });
      if (row.signed_transaction !== signed) return row.signed_transaction as Hex; // replaced meanwhile by another attempt
      const next = await this.treasury.signReplacement(signed, fees);
      await storeSignedTransaction(trx, idempotencyKey, next, keccak256(next), [...(row.replaced_tx_hashes ?? []), row.tx_hash!]);
      return next;
    });
    await this.node.broadcast(replacement);
    return keccak256(replacement);
  }
}
