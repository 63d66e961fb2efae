import { sql, type Transaction } from 'kysely';
import { parseTransaction, type Hex, type LocalAccount, type TransactionSerializableEIP1559 } from 'viem';
import type { Database } from '../../db/schema';
import type { EvmNode } from './node';

/** What signing a transaction needs from the node; read before the database transaction that signs. */
export interface PreparedTransaction {
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  chainId: number;
  pendingNonce: number;
}

/** A replacement pays at least 12.5 % more than the transaction it replaces (nodes ask for 10 %). */
const bumpFee = (fee: bigint) => fee + fee / 8n + 1n;
const maxOf = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));

/**
 * One account's transactions on one chain — the treasury's (payouts, refunds, gas for sweeps), or a
 * wallet's while its key is open: nonces are taken from `chain_nonces` in the database transaction
 * that stores the signed bytes, so two workers never sign two transactions with one nonce, and a
 * stuck transaction is replaced with the same nonce.
 */
export class AccountSigner {
  constructor(private readonly node: EvmNode, private readonly account: LocalAccount) {}

  get address(): Hex {
    return this.account.address;
  }

  prepare(): Promise<PreparedTransaction> {
    return AccountSigner.prepareFor(this.node, this.address);
  }

  /** What signing a transaction of `address` needs from the node now: fees, chain id, its pending nonce. */
  static async prepareFor(node: EvmNode, address: Hex): Promise<PreparedTransaction> {
    const [fees, chainId, pendingNonce] = await Promise.all([
      node.client.estimateFeesPerGas(),
      node.getChainId(),
      node.client.getTransactionCount({ address, blockTag: 'pending' }),
    ]);
    return { fees, chainId, pendingNonce };
  }

  /**
   * Signs a transaction with the account's next nonce, taken in `trx`: the caller stores the signed
   * bytes in the same transaction, before they are broadcast.
   */
  async sign(trx: Transaction<Database>, prepared: PreparedTransaction, tx: { to: Hex; data?: Hex; value?: bigint; gas: bigint }): Promise<Hex> {
    return this.account.signTransaction(await unsignedTransaction(trx, this.node, this.address, prepared, tx));
  }

  /**
   * Whether a sent transaction's fee cap has fallen under the chain's base fee, which would keep it
   * waiting until fees fall.
   */
  async isPricedOut(signed: Hex): Promise<boolean> {
    const sent = parseTransaction(signed);
    const { baseFeePerGas } = await this.node.client.getBlock({ blockTag: 'latest' });
    return baseFeePerGas !== null && sent.maxFeePerGas !== undefined && sent.maxFeePerGas < baseFeePerGas;
  }

  /** Fees for a replacement: what the chain takes now, and at least 12.5 % more than the transaction it replaces. */
  async replacementFees(signed: Hex): Promise<PreparedTransaction['fees']> {
    const sent = parseTransaction(signed);
    const fees = await this.node.client.estimateFeesPerGas();
    const maxPriorityFeePerGas = maxOf(fees.maxPriorityFeePerGas, bumpFee(sent.maxPriorityFeePerGas ?? 0n));
    return { maxPriorityFeePerGas, maxFeePerGas: maxOf(fees.maxFeePerGas, bumpFee(sent.maxFeePerGas!), maxPriorityFeePerGas) };
  }

  /** The same transaction (same nonce) re-signed with the replacement's fees. */
  signReplacement(signed: Hex, fees: PreparedTransaction['fees']): Promise<Hex> {
    const sent = parseTransaction(signed);
    return this.account.signTransaction({
      type: 'eip1559', chainId: sent.chainId!, nonce: sent.nonce!, to: sent.to!, data: sent.data!, gas: sent.gas!, ...fees,
    });
  }
}

/**
 * The next transaction of `address` (EIP-1559), its nonce taken from `chain_nonces` in `trx`: the
 * caller stores what is signed with it in the same transaction.
 */
export async function unsignedTransaction(
  trx: Transaction<Database>, node: EvmNode, address: Hex, prepared: PreparedTransaction, tx: { to: Hex; data?: Hex; value?: bigint; gas: bigint },
): Promise<TransactionSerializableEIP1559> {
  const { fees, chainId, pendingNonce } = prepared;
  await sql`insert into chain_nonces (chain, address, next_nonce) values (${node.chain}, ${address}, ${pendingNonce})
            on conflict do nothing`.execute(trx);
  // Never below the chain's own count: a transaction sent by other means must not be overwritten.
  const { next_nonce } = await trx.updateTable('chain_nonces').set({ next_nonce: sql`greatest(next_nonce, ${pendingNonce}) + 1` })
    .where('chain', '=', node.chain).where('address', '=', address).returning('next_nonce').executeTakeFirstOrThrow();
  return {
    type: 'eip1559', chainId, nonce: Number(next_nonce) - 1, ...tx, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  };
}

/** Hands a nonce back when it is still the last one taken (a signing that never happened); true if it did. */
export async function releaseNonce(trx: Transaction<Database>, chain: string, address: Hex, nonce: number): Promise<boolean> {
  const released = await trx.updateTable('chain_nonces').set({ next_nonce: nonce })
    .where('chain', '=', chain).where('address', '=', address).where('next_nonce', '=', nonce + 1).executeTakeFirst();
  return released.numUpdatedRows > 0n;
}
