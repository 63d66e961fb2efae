import { sql, type Transaction } from 'kysely';
import { encodeFunctionData, keccak256, type Hex } from 'viem';
import type { Db } from '../../db';
import type { Database } from '../../db/schema';
import { markSwept, otherSweepOut, startSweep, storeSweepTransaction, sweepByKey, type SweepRow } from '../../payments/sweeps';
import type { SweepRequest, SweepStatus } from '../chain-adapter';
import type { ChainKeys } from './keys';
import { stablecoinAbi, TOKEN_TRANSFER_GAS, type EvmNode } from './node';
import type { AccountSigner } from './account-signer';

/**
 * Moves deposits into the treasury: the deposit address holds tokens but no native asset for gas, so
 * the treasury first sends it the gas (unless it has enough), then the deposit address sends the
 * tokens to the treasury. Each transaction is signed and stored in `chain_sweeps` before it is
 * broadcast; a call after a crash re-sends the stored bytes, so the tokens move once.
 */
export class EvmSweeps {
  constructor(private readonly node: EvmNode, private readonly treasury: AccountSigner, private readonly keys: ChainKeys, private readonly db: Db) {}

  /** One step of the sweep per call: the caller calls again while it is pending. */
  async sweep(q: SweepRequest): Promise<SweepStatus> {
    const owner = this.keys.depositAccount(q.depositIndex);
    const row = await startSweep(this.db, {
      sweep_key: q.sweepKey, transfer_id: q.transferId, chain: this.node.chain, currency: q.currency, from_address: owner.address, amount_minor: q.amountMinor.toString(),
    });
    if (row.status === 'swept') return { status: 'swept', txHash: row.sweep_tx_hash };

    if (row.sweep_signed_transaction) {
      const receipt = await this.node.settledReceipt(row.sweep_signed_transaction as Hex);
      if (!receipt) return { status: 'pending' };
      if (receipt.status === 'reverted') throw new Error(`the sweep ${q.sweepKey} (${receipt.transactionHash}) reverted`);
      await markSwept(this.db, q.sweepKey);
      return { status: 'swept', txHash: receipt.transactionHash };
    }
    if (row.gas_signed_transaction && !(await this.node.settledReceipt(row.gas_signed_transaction as Hex))) return { status: 'pending' };

    const token = await this.node.token(q.currency);
    const data = encodeFunctionData({ abi: stablecoinAbi, functionName: 'transfer', args: [this.treasury.address, q.amountMinor] });
    const [fees, chainId, balance] = await Promise.all([
      this.node.client.estimateFeesPerGas(), this.node.getChainId(), this.node.client.getBalance({ address: owner.address }),
    ]);
    const gasCost = TOKEN_TRANSFER_GAS * fees.maxFeePerGas;
    if (balance < gasCost && !row.gas_signed_transaction) {
      const prepared = await this.treasury.prepare();
      const gas = await this.node.client.estimateGas({ account: this.treasury.address, to: owner.address, value: gasCost - balance });
      const signed = await this.storeOnce(row, 'gas', (trx) => this.treasury.sign(trx, prepared, { to: owner.address, value: gasCost - balance, gas }));
      if (!signed) return { status: 'pending' };
      await this.node.broadcast(signed);
      return { status: 'pending' };
    }
    // What the gas sent covers, should fees have risen since.
    const maxFeePerGas = fees.maxFeePerGas < balance / TOKEN_TRANSFER_GAS ? fees.maxFeePerGas : balance / TOKEN_TRANSFER_GAS;
    const maxPriorityFeePerGas = fees.maxPriorityFeePerGas < maxFeePerGas ? fees.maxPriorityFeePerGas : maxFeePerGas;
    const signed = await this.storeOnce(row, 'sweep', async () => owner.signTransaction({
      type: 'eip1559', chainId, to: token, data, gas: TOKEN_TRANSFER_GAS, maxFeePerGas, maxPriorityFeePerGas,
      nonce: await this.node.client.getTransactionCount({ address: owner.address, blockTag: 'pending' }),
    }));
    if (!signed) return { status: 'pending' };
    await this.node.broadcast(signed);
    return { status: 'pending' };
  }

  /**
   * Signs the sweep's gas or token transaction unless an earlier attempt did, and stores it before it
   * is broadcast. One sweep at a time per deposit address (a liquidation address receives many
   * deposits): while another sweep from it has a transaction out, nothing is signed (null) and the
   * caller comes back later; the address's nonce is read under that lock.
   */
  private storeOnce(sweep: SweepRow, which: 'gas' | 'sweep', sign: (trx: Transaction<Database>) => Promise<Hex>): Promise<Hex | null> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${`sweep:${sweep.chain}:${sweep.from_address}`}))`.execute(trx);
      const row = await sweepByKey(trx, sweep.sweep_key, { forUpdate: true });
      const stored = which === 'gas' ? row.gas_signed_transaction : row.sweep_signed_transaction;
      if (stored) return stored as Hex;
      if (!row.gas_signed_transaction && await otherSweepOut(trx, row)) return null;
      const signed = await sign(trx);
      await storeSweepTransaction(trx, sweep.sweep_key, which, signed, keccak256(signed));
      return signed;
    });
  }
}
