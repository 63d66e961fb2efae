import type { Transaction } from 'kysely';
import { getAddress, keccak256, serializeTransaction, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../db';
import type { Database } from '../../db/schema';
import { claimWalletTransaction, storedWalletTransaction, storeWalletTransaction } from '../../payments/wallet-signed-transactions';
import { PayoutRejectedError, type PreparedWalletTransaction, type WalletSendRequest, type WalletTransactionRequest } from '../chain-adapter';
import { AccountSigner, unsignedTransaction, type PreparedTransaction } from './account-signer';
import { TOKEN_TRANSFER_GAS, type EvmNode } from './node';

/**
 * Token transfers signed by a wallet's own key, which pays its gas. The key is opened only when
 * there is something to sign, and only for this call; the signed bytes are stored (with the nonce
 * taken) before they are broadcast, so a retry after a crash re-sends the identical transaction.
 */
export class EvmWalletSends {
  constructor(private readonly node: EvmNode, private readonly db: Db) {}

  async send(r: WalletSendRequest): Promise<{ txHash: string }> {
    const raw = ((await storedWalletTransaction(this.db, r.idempotencyKey)) as Hex | null) ?? (await this.sign(r));
    await this.node.broadcast(raw);
    return { txHash: keccak256(raw) };
  }

  private async sign(r: WalletSendRequest): Promise<Hex> {
    const from = getAddress(r.from);
    const { token, data, prepared } = await this.check(r);
    const key = await r.openKey();
    try {
      const account = privateKeyToAccount(`0x${key.toString('hex')}`);
      if (account.address !== from) throw new Error(`wallet ${r.walletId}: its key does not open to its address`);
      const signer = new AccountSigner(this.node, account);
      return await this.db.transaction().execute(async (trx) => {
        const stored = await claimWalletTransaction(trx, r.idempotencyKey, { walletId: r.walletId, transferId: r.transferId, chain: this.node.chain });
        if (stored) return stored as Hex;
        const signed = await signer.sign(trx, prepared, { to: token, data, gas: TOKEN_TRANSFER_GAS });
        await storeWalletTransaction(trx, r.idempotencyKey, signed, keccak256(signed));
        return signed;
      });
    } finally {
      key.fill(0);
    }
  }

  /**
   * The unsigned transaction of a wallet whose key is shared (MPC): checked as a signed one is, its
   * nonce taken in the database transaction that `keep` stores it in.
   */
  async prepare(r: WalletTransactionRequest, keep: (trx: Transaction<Database>, tx: PreparedWalletTransaction) => Promise<void>): Promise<PreparedWalletTransaction> {
    const from = getAddress(r.from);
    const { token, data, prepared } = await this.check(r);
    return this.db.transaction().execute(async (trx) => {
      const unsigned = await unsignedTransaction(trx, this.node, from, prepared, { to: token, data, gas: TOKEN_TRANSFER_GAS });
      const serialized = serializeTransaction(unsigned);
      const tx = { serialized, hash: keccak256(serialized), chainId: unsigned.chainId, nonce: unsigned.nonce!, token };
      await keep(trx, tx);
      return tx;
    });
  }

  /** A revert now (the wallet holds too little, a blocked sender) or too little gas is final: nothing is signed. */
  private async check(r: WalletTransactionRequest): Promise<{ token: Hex; data: Hex; prepared: PreparedTransaction }> {
    const from = getAddress(r.from);
    const { token, data } = await this.node.tokenTransfer({ currency: r.currency, from, to: r.to, amountMinor: r.amountMinor });
    const prepared = await AccountSigner.prepareFor(this.node, from);
    const gasMoney = await this.node.client.getBalance({ address: from });
    if (gasMoney < TOKEN_TRANSFER_GAS * prepared.fees.maxFeePerGas) {
      throw new PayoutRejectedError(`the wallet holds ${gasMoney} wei of ${this.node.nativeAsset}, less than the gas of a token transfer`);
    }
    return { token, data, prepared };
  }
}
