import { sql, type Transaction } from 'kysely';
import {
  BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, createPublicClient, decodeErrorResult, encodeFunctionData, erc20Abi,
  getAddress, getContractAddress, http, keccak256, parseTransaction, type Hex, type PublicClient, type TransactionReceipt,
} from 'viem';
import { HDKey, hdKeyToAccount, type HDAccount } from 'viem/accounts';
import { mnemonicToSeedSync } from '@scure/bip39';
import type { Db } from '../db';
import type { Database } from '../db/schema';
import { ASSET_SCALE } from '../domain/money';
import { RAILS, type EvmChain } from '../domain/rails';
import {
  ChainUnavailableError, PayoutRejectedError, type ChainAdapter, type PayoutRequest, type PayoutStatus, type SweepRequest, type SweepStatus, type TransferScan,
} from './chain-adapter';
import stablecoin from '../../contracts/Stablecoin.json';

export const STABLECOIN_ABI = stablecoin.abi as typeof stablecoin.abi;
const abi = STABLECOIN_ABI as readonly unknown[] as import('viem').Abi;

/** Gas a token payout takes, with room to spare (an ERC-20 transfer uses ~35–55k). */
const PAYOUT_GAS = 90_000n;
/** A replacement pays at least 12.5 % more than the transaction it replaces (nodes ask for 10 %). */
const bumpFee = (fee: bigint) => fee + fee / 8n + 1n;
const maxOf = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));
/** Our deposit addresses start at this HD index; lower indexes are the platform's own keys. */
const DEPOSIT_INDEX_BASE = 1000;

export const NATIVE_ASSET: Record<EvmChain, string> = { ethereum: 'eth', polygon: 'matic', arbitrum: 'eth', optimism: 'eth', base: 'eth' };
/** Local chain ids, distinct per chain, for the anvil nodes. */
export const LOCAL_CHAIN_IDS: Record<EvmChain, number> = { ethereum: 31337, polygon: 31338, arbitrum: 31339, optimism: 31340, base: 31341 };
/** The ids each chain is known by (mainnet, public testnet, local node): a node of another chain is refused. */
const KNOWN_CHAIN_IDS: Record<EvmChain, number[]> = {
  ethereum: [1, 11155111, LOCAL_CHAIN_IDS.ethereum],
  polygon: [137, 80002, LOCAL_CHAIN_IDS.polygon],
  arbitrum: [42161, 421614, LOCAL_CHAIN_IDS.arbitrum],
  optimism: [10, 11155420, LOCAL_CHAIN_IDS.optimism],
  base: [8453, 84532, LOCAL_CHAIN_IDS.base],
};

/** The platform's keys on every EVM chain, from one mnemonic: m/44'/60'/0'/0/{index}. */
export class ChainKeys {
  private readonly root: HDKey;
  private readonly cache = new Map<number, HDAccount>();

  constructor(mnemonic: string) {
    this.root = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic.trim()));
  }

  account(index: number): HDAccount {
    let a = this.cache.get(index);
    if (!a) this.cache.set(index, (a = hdKeyToAccount(this.root, { addressIndex: index })));
    return a;
  }

  /** Holds the float that payouts are paid from, and pays their gas. */
  get treasury() {
    return this.account(0);
  }

  /** Deploys the sandbox stablecoins and mints them (owner of the contracts). */
  get issuer() {
    return this.account(1);
  }
}

/** Where the i-th listed stablecoin of a chain lives: deployed by the issuer with nonce i. */
export function sandboxTokenAddress(keys: ChainKeys, chain: EvmChain, currency: string): Hex {
  const index = RAILS[chain].currencies.indexOf(currency);
  if (index < 0) throw new Error(`${chain} carries no ${currency}`);
  return getContractAddress({ from: keys.issuer.address, nonce: BigInt(index) });
}

/**
 * An EVM chain over JSON-RPC. Payouts are signed here, stored (hash and raw bytes) in the payment
 * row in the same transaction that takes the nonce, and only then broadcast: a retried or replayed
 * payout re-sends the identical transaction, which the chain can include at most once.
 */
export class EvmChainAdapter implements ChainAdapter {
  readonly nativeAsset: string;
  readonly sweepsDeposits = true;
  private readonly client: PublicClient;
  private chainId?: number;
  private readonly checkedTokens = new Map<string, Promise<Hex>>();

  constructor(
    readonly chain: EvmChain,
    rpcUrl: string,
    /**
     * `tokenAddress` names a currency's contract, or throws ChainUnavailableError when there is none.
     * `depositFinality`: a deposit counts once its block is finalized, or `confirmations` deep.
     */
    private readonly deps: {
      db: Db; keys: ChainKeys; confirmations: number; depositFinality: 'finalized' | 'confirmations'; logBlockRange: number;
      tokenAddress: (currency: string) => Hex;
    },
  ) {
    this.nativeAsset = NATIVE_ASSET[chain];
    // No block-number cache: confirmations are counted from the latest block.
    this.client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }), cacheTime: 0 }) as PublicClient;
  }

  /**
   * The currency's token contract, checked once per process: a contract is there, and it counts in
   * the asset's scale (a USDC address given for DAI would pay out 10^12 times too little, or too much).
   */
  private token(currency: string): Promise<Hex> {
    let checked = this.checkedTokens.get(currency);
    if (!checked) {
      checked = this.readTokenDecimals(currency);
      this.checkedTokens.set(currency, checked);
      checked.catch(() => this.checkedTokens.delete(currency)); // an unanswered RPC call is tried again
    }
    return checked;
  }

  private async readTokenDecimals(currency: string): Promise<Hex> {
    const address = this.deps.tokenAddress(currency);
    await this.getChainId();
    const decimals = await this.client.readContract({ address, abi: erc20Abi, functionName: 'decimals' }).catch((err) => {
      if (err instanceof BaseError && err.walk((e) => e instanceof ContractFunctionZeroDataError)) {
        throw new ChainUnavailableError(`There is no ${currency} token contract at ${address} on ${this.chain}`);
      }
      throw err;
    });
    if (decimals !== ASSET_SCALE[currency]) {
      throw new ChainUnavailableError(`The ${currency} contract at ${address} on ${this.chain} has ${decimals} decimals; ${currency} amounts have ${ASSET_SCALE[currency]}`);
    }
    return address;
  }

  async checkCurrency(currency: string): Promise<void> {
    await this.token(currency);
  }

  depositAddress(index: number): string {
    return this.deps.keys.account(DEPOSIT_INDEX_BASE + index).address;
  }

  async currentPosition(): Promise<string> {
    return (await this.client.getBlockNumber()).toString();
  }

  async findTransfersTo(q: { currency: string; addresses: string[]; fromPosition: string }): Promise<TransferScan> {
    const latest = await this.client.getBlockNumber();
    const confirmedTip = this.deps.depositFinality === 'finalized'
      ? (await this.client.getBlock({ blockTag: 'finalized' })).number
      : latest - BigInt(Math.max(0, this.deps.confirmations - 1));
    const fromBlock = BigInt(q.fromPosition);
    if (confirmedTip < fromBlock || q.addresses.length === 0) return { transfers: [], nextPosition: q.fromPosition, caughtUp: true };
    const rangeEnd = fromBlock + BigInt(this.deps.logBlockRange) - 1n;
    const toBlock = confirmedTip < rangeEnd ? confirmedTip : rangeEnd;
    const raw = await this.client.getLogs({
      address: await this.token(q.currency),
      event: { type: 'event', name: 'Transfer', inputs: [
        { type: 'address', name: 'from', indexed: true }, { type: 'address', name: 'to', indexed: true }, { type: 'uint256', name: 'value', indexed: false },
      ] },
      // Several addresses in one query: the node matches any of them.
      args: { to: q.addresses.map((a) => getAddress(a)) },
      fromBlock,
      toBlock,
    });
    const transfers = raw.map((l) => ({
      id: `${l.transactionHash}:${l.logIndex}`, txHash: l.transactionHash, from: l.args.from!, to: l.args.to!, amountMinor: l.args.value!,
      confirmations: Number(latest - l.blockNumber + 1n),
    }));
    return { transfers, nextPosition: (toBlock + 1n).toString(), caughtUp: toBlock === confirmedTip };
  }

  async estimatePayoutFee(): Promise<bigint> {
    const fees = await this.client.estimateFeesPerGas();
    return PAYOUT_GAS * fees.maxFeePerGas;
  }

  /** The node's chain id, once it is known not to be another chain's (swapped EVM_RPC_URLS would sign payouts for the wrong chain). */
  private async getChainId(): Promise<number> {
    if (this.chainId === undefined) {
      const id = await this.client.getChainId();
      const other = (Object.keys(KNOWN_CHAIN_IDS) as EvmChain[]).find((c) => c !== this.chain && KNOWN_CHAIN_IDS[c].includes(id));
      if (other) throw new ChainUnavailableError(`The ${this.chain} node (EVM_RPC_URLS) reports chain id ${id}, which is ${other}'s`);
      this.chainId = id;
    }
    return this.chainId;
  }

  async sendPayout(r: PayoutRequest): Promise<{ txHash: string }> {
    const treasury = this.deps.keys.treasury;
    let raw = (await this.paymentRow(r.idempotencyKey)).signed_transaction as Hex | null;
    if (!raw) {
      const to = await this.token(r.currency);
      const data = encodeFunctionData({ abi, functionName: 'transfer', args: [getAddress(r.to), r.amountMinor] });
      // A revert now (a blocked receiver, say) is final: nothing is signed, the payout is undeliverable.
      try {
        await this.client.call({ account: treasury.address, to, data });
      } catch (err) {
        const reason = revertReason(err);
        if (reason) throw new PayoutRejectedError(reason);
        throw err;
      }
      const prepared = await this.prepareTreasuryTransaction();
      raw = await this.deps.db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('payments').select(['signed_transaction']).where('idempotency_key', '=', r.idempotencyKey)
          .forUpdate().executeTakeFirstOrThrow();
        if (row.signed_transaction) return row.signed_transaction as Hex;
        const signed = await this.signTreasuryTransaction(trx, prepared, { to, data, gas: PAYOUT_GAS });
        await trx.updateTable('payments').set({ signed_transaction: signed, tx_hash: keccak256(signed), updated_at: new Date() })
          .where('idempotency_key', '=', r.idempotencyKey).execute();
        return signed;
      });
    }
    await this.broadcast(raw);
    return { txHash: keccak256(raw) };
  }

  /** What signing a treasury transaction needs from the node; read before the database transaction that signs. */
  private async prepareTreasuryTransaction() {
    const [fees, chainId, pendingNonce] = await Promise.all([
      this.client.estimateFeesPerGas(),
      this.getChainId(),
      this.client.getTransactionCount({ address: this.deps.keys.treasury.address, blockTag: 'pending' }),
    ]);
    return { fees, chainId, pendingNonce };
  }

  /**
   * Signs a treasury transaction with the next nonce, taken in `trx`: the caller stores the signed
   * bytes in the same transaction, before they are broadcast.
   */
  private async signTreasuryTransaction(
    trx: Transaction<Database>, prepared: Awaited<ReturnType<EvmChainAdapter['prepareTreasuryTransaction']>>,
    tx: { to: Hex; data?: Hex; value?: bigint; gas: bigint },
  ): Promise<Hex> {
    const treasury = this.deps.keys.treasury;
    const { fees, chainId, pendingNonce } = prepared;
    await sql`insert into chain_nonces (chain, address, next_nonce) values (${this.chain}, ${treasury.address}, ${pendingNonce})
              on conflict do nothing`.execute(trx);
    // Never below the chain's own count: a transaction sent by other means must not be overwritten.
    const { next_nonce } = await trx.updateTable('chain_nonces').set({ next_nonce: sql`greatest(next_nonce, ${pendingNonce}) + 1` })
      .where('chain', '=', this.chain).where('address', '=', treasury.address).returning('next_nonce').executeTakeFirstOrThrow();
    return treasury.signTransaction({
      type: 'eip1559', chainId, nonce: Number(next_nonce) - 1, ...tx,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
  }

  private async broadcast(raw: Hex) {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (err) {
      // Sent before (a retry after a crash): the chain already knows it, or has mined it.
      if (/already known|nonce too low|already imported|known transaction/i.test(String((err as Error).message))) return;
      throw err;
    }
  }

  private paymentRow(key: string) {
    return this.deps.db.selectFrom('payments').select(['signed_transaction', 'tx_hash', 'replaced_tx_hashes'])
      .where('idempotency_key', '=', key).executeTakeFirstOrThrow();
  }

  async payoutStatus(idempotencyKey: string): Promise<PayoutStatus> {
    const row = await this.paymentRow(idempotencyKey);
    if (!row.signed_transaction || !row.tx_hash) throw new Error(`payout ${idempotencyKey} was never signed`);
    // The payout and any replacements share one nonce: at most one of them is mined.
    const hashes = [row.tx_hash, ...(row.replaced_tx_hashes ?? [])] as Hex[];
    let receipt: TransactionReceipt | null = null;
    for (const hash of hashes) {
      receipt = await this.client.getTransactionReceipt({ hash }).catch(() => null);
      if (receipt) break;
    }
    if (!receipt) return { status: 'pending', txHash: await this.keepPayoutMoving(idempotencyKey, row.signed_transaction as Hex) };
    const txHash = receipt.transactionHash;
    if (txHash !== row.tx_hash) {
      // An earlier transaction won: the payment names the one that was mined.
      await this.deps.db.updateTable('payments')
        .set({ tx_hash: txHash, replaced_tx_hashes: JSON.stringify(hashes.filter((h) => h !== txHash)), updated_at: new Date() })
        .where('idempotency_key', '=', idempotencyKey).execute();
    }
    // A revert is final only as deep as a success: a reorganised block may mine the same transaction
    // again, and succeed, after its payout was refunded.
    const latest = await this.client.getBlockNumber();
    if (latest - receipt.blockNumber + 1n < BigInt(this.deps.confirmations)) return { status: 'pending', txHash };
    if (receipt.status === 'reverted') return { status: 'failed', txHash, reason: 'the token contract reverted the transfer' };
    return { status: 'confirmed', txHash, networkFee: (receipt.gasUsed * receipt.effectiveGasPrice).toString(), nativeAsset: this.nativeAsset };
  }

  /**
   * A payout not mined yet: sent again if the node lost it (a restart, say); re-signed with the same
   * nonce and a higher fee if its fee cap has fallen under the chain's base fee, which would otherwise
   * keep it waiting until fees fall. Returns the hash of the transaction now out.
   */
  private async keepPayoutMoving(idempotencyKey: string, signed: Hex): Promise<Hex> {
    const sent = parseTransaction(signed);
    const { baseFeePerGas } = await this.client.getBlock({ blockTag: 'latest' });
    if (baseFeePerGas === null || sent.maxFeePerGas === undefined || sent.maxFeePerGas >= baseFeePerGas) {
      const hash = keccak256(signed);
      const known = await this.client.getTransaction({ hash }).catch(() => null);
      if (!known) await this.broadcast(signed);
      return hash;
    }
    const fees = await this.client.estimateFeesPerGas();
    const maxPriorityFeePerGas = maxOf(fees.maxPriorityFeePerGas, bumpFee(sent.maxPriorityFeePerGas ?? 0n));
    const maxFeePerGas = maxOf(fees.maxFeePerGas, bumpFee(sent.maxFeePerGas), maxPriorityFeePerGas);
    const replacement = await this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('payments').select(['signed_transaction', 'tx_hash', 'replaced_tx_hashes'])
        .where('idempotency_key', '=', idempotencyKey).forUpdate().executeTakeFirstOrThrow();
      if (row.signed_transaction !== signed) return row.signed_transaction as Hex; // replaced meanwhile by another attempt
      const next = await this.deps.keys.treasury.signTransaction({
        type: 'eip1559', chainId: sent.chainId!, nonce: sent.nonce!, to: sent.to!, data: sent.data!, gas: sent.gas!, maxFeePerGas, maxPriorityFeePerGas,
      });
      await trx.updateTable('payments').set({
        signed_transaction: next, tx_hash: keccak256(next), replaced_tx_hashes: JSON.stringify([...(row.replaced_tx_hashes ?? []), row.tx_hash]),
        updated_at: new Date(),
      }).where('idempotency_key', '=', idempotencyKey).execute();
      return next;
    });
    await this.broadcast(replacement);
    return keccak256(replacement);
  }

  /**
   * Moves a deposit into the treasury: the deposit address holds tokens but no native asset for gas,
   * so the treasury first sends it the gas (unless it has enough), then the deposit address sends the
   * tokens to the treasury. Each transaction is signed and stored in `chain_sweeps` before it is
   * broadcast; a call after a crash re-sends the stored bytes, so the tokens move once.
   */
  async sweepDeposit(q: SweepRequest): Promise<SweepStatus> {
    const owner = this.deps.keys.account(DEPOSIT_INDEX_BASE + q.depositIndex);
    const now = new Date();
    await this.deps.db.insertInto('chain_sweeps').values({
      sweep_key: q.sweepKey, transfer_id: q.transferId, chain: this.chain, currency: q.currency, from_address: owner.address, amount_minor: q.amountMinor.toString(),
      gas_signed_transaction: null, gas_tx_hash: null, sweep_signed_transaction: null, sweep_tx_hash: null, status: 'pending', created_at: now, updated_at: now,
    }).onConflict((oc) => oc.column('sweep_key').doNothing()).execute();
    const row = await this.sweepRow(q.sweepKey);
    if (row.status === 'swept') return { status: 'swept', txHash: row.sweep_tx_hash };

    if (row.sweep_signed_transaction) {
      const receipt = await this.settledReceipt(row.sweep_signed_transaction as Hex);
      if (!receipt) return { status: 'pending' };
      if (receipt.status === 'reverted') throw new Error(`the sweep ${q.sweepKey} (${receipt.transactionHash}) reverted`);
      await this.deps.db.updateTable('chain_sweeps').set({ status: 'swept', updated_at: new Date() }).where('sweep_key', '=', q.sweepKey).execute();
      return { status: 'swept', txHash: receipt.transactionHash };
    }
    if (row.gas_signed_transaction && !(await this.settledReceipt(row.gas_signed_transaction as Hex))) return { status: 'pending' };

    const token = await this.token(q.currency);
    const data = encodeFunctionData({ abi, functionName: 'transfer', args: [this.deps.keys.treasury.address, q.amountMinor] });
    const [fees, chainId, nonce, balance] = await Promise.all([
      this.client.estimateFeesPerGas(), this.getChainId(),
      this.client.getTransactionCount({ address: owner.address, blockTag: 'pending' }), this.client.getBalance({ address: owner.address }),
    ]);
    const gasCost = PAYOUT_GAS * fees.maxFeePerGas;
    if (balance < gasCost && !row.gas_signed_transaction) {
      const prepared = await this.prepareTreasuryTransaction();
      const gas = await this.client.estimateGas({ account: this.deps.keys.treasury.address, to: owner.address, value: gasCost - balance });
      const signed = await this.storeSweepTransaction(q.sweepKey, 'gas', (trx) =>
        this.signTreasuryTransaction(trx, prepared, { to: owner.address, value: gasCost - balance, gas }));
      await this.broadcast(signed);
      return { status: 'pending' };
    }
    // What the gas sent covers, should fees have risen since.
    const maxFeePerGas = fees.maxFeePerGas < balance / PAYOUT_GAS ? fees.maxFeePerGas : balance / PAYOUT_GAS;
    const maxPriorityFeePerGas = fees.maxPriorityFeePerGas < maxFeePerGas ? fees.maxPriorityFeePerGas : maxFeePerGas;
    const signed = await this.storeSweepTransaction(q.sweepKey, 'sweep', () => owner.signTransaction({
      type: 'eip1559', chainId, nonce, to: token, data, gas: PAYOUT_GAS, maxFeePerGas, maxPriorityFeePerGas,
    }));
    await this.broadcast(signed);
    return { status: 'pending' };
  }

  private sweepRow(sweepKey: string) {
    return this.deps.db.selectFrom('chain_sweeps').selectAll().where('sweep_key', '=', sweepKey).executeTakeFirstOrThrow();
  }

  /** Signs the sweep's gas or token transaction unless an earlier attempt did, and stores it before it is broadcast. */
  private storeSweepTransaction(sweepKey: string, which: 'gas' | 'sweep', sign: (trx: Transaction<Database>) => Promise<Hex>): Promise<Hex> {
    return this.deps.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('chain_sweeps').selectAll().where('sweep_key', '=', sweepKey).forUpdate().executeTakeFirstOrThrow();
      const stored = which === 'gas' ? row.gas_signed_transaction : row.sweep_signed_transaction;
      if (stored) return stored as Hex;
      const signed = await sign(trx);
      await trx.updateTable('chain_sweeps').set(which === 'gas'
        ? { gas_signed_transaction: signed, gas_tx_hash: keccak256(signed), updated_at: new Date() }
        : { sweep_signed_transaction: signed, sweep_tx_hash: keccak256(signed), updated_at: new Date() })
        .where('sweep_key', '=', sweepKey).execute();
      return signed;
    });
  }

  /** The receipt of a stored transaction once it has its confirmations; sent again if the node lost it. */
  private async settledReceipt(signed: Hex): Promise<TransactionReceipt | null> {
    const hash = keccak256(signed);
    const receipt = await this.client.getTransactionReceipt({ hash }).catch(() => null);
    if (!receipt) {
      if (!(await this.client.getTransaction({ hash }).catch(() => null))) await this.broadcast(signed);
      return null;
    }
    const latest = await this.client.getBlockNumber();
    return latest - receipt.blockNumber + 1n < BigInt(this.deps.confirmations) ? null : receipt;
  }

  /** Sandbox: the issuer mints the amount to the address, which shows on chain as a Transfer to it. */
  async sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint }): Promise<{ txHash: string }> {
    return issuerLock.run(this.chain, async () => {
      const issuer = this.deps.keys.issuer;
      const [fees, chainId, nonce] = await Promise.all([
        this.client.estimateFeesPerGas(), this.getChainId(), this.client.getTransactionCount({ address: issuer.address, blockTag: 'pending' }),
      ]);
      const signed = await issuer.signTransaction({
        type: 'eip1559', chainId, nonce, to: await this.token(q.currency), gas: 120_000n,
        data: encodeFunctionData({ abi, functionName: 'mint', args: [getAddress(q.address), q.amountMinor] }),
        maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const hash = await this.client.sendRawTransaction({ serializedTransaction: signed });
      await this.client.waitForTransactionReceipt({ hash, pollingInterval: 200 });
      return { txHash: hash };
    });
  }
}

/** The reason a call reverted (a custom error's name), or undefined when it failed for another cause. */
function revertReason(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError || (e as { data?: unknown }).data !== undefined);
  if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName ?? reverted.reason ?? 'reverted';
  const data = (reverted as { data?: Hex } | null)?.data;
  if (typeof data === 'string' && data.startsWith('0x')) {
    try {
      const decoded = decodeErrorResult({ abi, data });
      return `${decoded.errorName}(${(decoded.args ?? []).join(', ')})`;
    } catch {
      return 'reverted';
    }
  }
  return /revert/i.test(err.message) ? 'reverted' : undefined;
}

/** One issuer transaction at a time per chain in this process, so nonces do not collide. */
const issuerLock = {
  tails: new Map<string, Promise<unknown>>(),
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.tails.get(key) ?? Promise.resolve()).then(fn, fn);
    this.tails.set(key, next.catch(() => undefined));
    return next;
  },
};
