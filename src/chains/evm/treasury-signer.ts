import { sql, type Transaction } from 'kysely';
import { parseTransaction, type Hex } from 'viem';
import type { Database } from '../../db/schema';
import type { ChainKeys } from './keys';
import type { EvmNode } from './node';

/** What signing a treasury transaction needs from the node; read before the database transaction that signs. */
export interface PreparedTreasuryTransaction {
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  chainId: number;
  pendingNonce: number;
}

/** A replacement pays at least 12.5 % more than the transaction it replaces (nodes ask for 10 %). */
const bumpFee = (fee: bigint) => fee + fee / 8n + 1n;
const maxOf = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));

/**
 * The treasury's transactions (payouts, refunds, gas for sweeps) on one chain: nonces are taken from
 * `chain_nonces` in the database transaction that stores the signed bytes, so two workers never sign
 * two transactions with one nonce, and a stuck transaction is replaced with the same nonce.
 */
export class TreasurySigner {
  constructor(private readonly node: EvmNode, private readonly keys: ChainKeys) {}

  get address(): Hex {
    return this.keys.treasury.address;
  }

  async prepare(): Promise<PreparedTreasuryTransaction> {
    const [fees, chainId, pendingNonce] = await Promise.all([
      this.node.client.estimateFeesPerGas(),
      this.node.getChainId(),
      this.node.client.getTransactionCount({ address: this.address, blockTag: 'pending' }),
    ]);
    return { fees, chainId, pendingNonce };
  }

  /**
   * Signs a treasury transaction with the next nonce, taken in `trx`: the caller stores the signed
   * bytes in the same transaction, before they are broadcast.
   */
  async sign(trx: Transaction<Database>, prepared: PreparedTreasuryTransaction, tx: { to: Hex; data?: Hex; value?: bigint; gas: bigint }): Promise<Hex> {
    const { fees, chainId, pendingNonce } = prepared;
    await sql`insert into chain_nonces (chain, address, next_nonce) values (${this.node.chain}, ${this.address}, ${pendingNonce})
              on conflict do nothing`.execute(trx);
    // Never below the chain's own count: a transaction sent by other means must not be overwritten.
    const { next_nonce } = await trx.updateTable('chain_nonces').set({ next_nonce: sql`greatest(next_nonce, ${pendingNonce}) + 1` })
      .where('chain', '=', this.node.chain).where('address', '=', this.address).returning('next_nonce').executeTakeFirstOrThrow();
    return this.keys.treasury.signTransaction({
      type: 'eip1559', chainId, nonce: Number(next_nonce) - 1, ...tx,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
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
  async replacementFees(signed: Hex): Promise<PreparedTreasuryTransaction['fees']> {
    const sent = parseTransaction(signed);
    const fees = await this.node.client.estimateFeesPerGas();
    const maxPriorityFeePerGas = maxOf(fees.maxPriorityFeePerGas, bumpFee(sent.maxPriorityFeePerGas ?? 0n));
    return { maxPriorityFeePerGas, maxFeePerGas: maxOf(fees.maxFeePerGas, bumpFee(sent.maxFeePerGas!), maxPriorityFeePerGas) };
  }

  /** The same transaction (same nonce) re-signed with the replacement's fees. */
  signReplacement(signed: Hex, fees: PreparedTreasuryTransaction['fees']): Promise<Hex> {
    const sent = parseTransaction(signed);
    return this.keys.treasury.signTransaction({
      type: 'eip1559', chainId: sent.chainId!, nonce: sent.nonce!, to: sent.to!, data: sent.data!, gas: sent.gas!, ...fees,
    });
  }
}
