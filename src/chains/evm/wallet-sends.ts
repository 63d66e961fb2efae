import { getAddress, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../db';
import { claimWalletTransaction, storedWalletTransaction, storeWalletTransaction } from '../../wallets/signed-transactions';
import { PayoutRejectedError, type WalletSendRequest } from '../chain-adapter';
import { AccountSigner } from './account-signer';
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
    // A revert now (the wallet holds too little, a blocked sender) is final: nothing is signed.
    const { token, data } = await this.node.tokenTransfer({ currency: r.currency, from, to: r.to, amountMinor: r.amountMinor });
    const key = await r.openKey();
    try {
      const account = privateKeyToAccount(`0x${key.toString('hex')}`);
      if (account.address !== from) throw new Error(`wallet ${r.walletId}: its key does not open to its address`);
      const signer = new AccountSigner(this.node, account);
      const prepared = await signer.prepare();
      const gasMoney = await this.node.client.getBalance({ address: from });
      if (gasMoney < TOKEN_TRANSFER_GAS * prepared.fees.maxFeePerGas) {
        throw new PayoutRejectedError(`the wallet holds ${gasMoney} wei of ${this.node.nativeAsset}, less than the gas of a token transfer`);
      }
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
}
