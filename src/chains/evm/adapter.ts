import type { Transaction } from 'kysely';
import { erc20Abi, getAddress, parseEventLogs, TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { RAILS } from '../../domain/rails';
import type { Db } from '../../db';
import type { Database } from '../../db/schema';
import type { EvmChain } from '../../domain/rails';
import {
  ChainUnavailableError, type AssetBalance, type ChainAdapter, type ChainMovement, type SandboxChainFunding, type PayoutRequest, type PayoutStatus, type SweepRequest,
  type SweepStatus, type TokenTransferPage, type TreasuryHoldings, type TreasuryNative, type TransferScan, type WalletSendRequest, type WalletTransactionRequest, type PreparedWalletTransaction,
} from '../chain-adapter';
import type { ChainKeys } from './keys';
import { EvmNode, STABLECOIN_ABI, TOKEN_TRANSFER_GAS } from './node';
import { EvmPayouts } from './payouts';
import { mintSandboxDeposit } from './sandbox-funding';
import { EvmSweeps } from './sweeps';
import { EvmWalletSends } from './wallet-sends';
import { AccountSigner } from './account-signer';

/** The ERC-20 Transfer event. */
const TRANSFER_EVENT = {
  type: 'event', name: 'Transfer', inputs: [
    { type: 'address', name: 'from', indexed: true }, { type: 'address', name: 'to', indexed: true }, { type: 'uint256', name: 'value', indexed: false },
  ],
} as const;

/**
 * An EVM chain over JSON-RPC: deposit addresses and the scan for token transfers to them here;
 * payouts (src/chains/evm/payouts.ts), sweeps (sweeps.ts) and the treasury's nonces and signing
 * (account-signer.ts) in files of their own.
 */
export class EvmChainAdapter implements ChainAdapter, SandboxChainFunding {
  readonly sweepsDeposits = true;
  readonly walletsPayGas = true;
  private readonly node: EvmNode;
  private readonly payouts: EvmPayouts;
  private readonly sweeps: EvmSweeps;
  private readonly walletSends: EvmWalletSends;

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
    this.node = new EvmNode(chain, rpcUrl, deps);
    const treasury = new AccountSigner(this.node, deps.keys.treasury);
    this.payouts = new EvmPayouts(this.node, treasury, deps.db);
    this.sweeps = new EvmSweeps(this.node, treasury, deps.keys, deps.db);
    this.walletSends = new EvmWalletSends(this.node, deps.db);
  }

  get nativeAsset(): string {
    return this.node.nativeAsset;
  }

  isTokenContract(address: string): boolean {
    return RAILS[this.chain].currencies.some((currency) => {
      try {
        return this.deps.tokenAddress(currency).toLowerCase() === address.toLowerCase();
      } catch {
        return false; // No contract for that currency here.
      }
    });
  }

  async checkCurrency(currency: string): Promise<void> {
    await this.node.token(currency);
  }

  async receiverRefusal(currency: string, address: string): Promise<string | undefined> {
    const token = await this.node.token(currency);
    // The project's stablecoins keep `blocked`; a token without it (the call reverts) blocks nobody we can know of.
    const blocked = await this.node.client.readContract({ address: token, abi: STABLECOIN_ABI, functionName: 'blocked', args: [getAddress(address)] })
      .then((b) => b === true, () => false);
    return blocked ? `the ${currency} contract on ${this.chain} blocks the destination address ${address}` : undefined;
  }

  depositAddress(index: number): string {
    return this.deps.keys.depositAccount(index).address;
  }

  async currentPosition(): Promise<string> {
    return (await this.node.client.getBlockNumber()).toString();
  }

  async findTransfersTo(q: { currency: string; addresses: string[]; fromPosition: string }): Promise<TransferScan> {
    const client = this.node.client;
    const { latest, confirmed: confirmedTip } = await this.tips();
    const fromBlock = BigInt(q.fromPosition);
    if (confirmedTip < fromBlock || q.addresses.length === 0) return { transfers: [], nextPosition: q.fromPosition, caughtUp: true };
    const toBlock = this.lastBlockOfRead(fromBlock, confirmedTip);
    const raw = await client.getLogs({
      address: await this.node.token(q.currency),
      event: TRANSFER_EVENT,
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

  async readTokenTransfers(fromPosition: string): Promise<TokenTransferPage> {
    const { latest, confirmed } = await this.tips();
    const fromBlock = BigInt(fromPosition);
    const tokens = await this.servedTokens();
    if (latest < fromBlock || tokens.size === 0) return { transfers: [], nextPosition: fromPosition, caughtUp: true };
    const toBlock = this.lastBlockOfRead(fromBlock, latest);
    // Every transfer of the chain's tokens in the range, whoever it is to: the cost follows the
    // chain's traffic, not the number of wallets, which are matched afterwards in the database.
    const logs = await this.node.client.getLogs({ address: [...tokens.keys()], event: TRANSFER_EVENT, fromBlock, toBlock });
    const transfers = logs.map((l) => ({
      id: `${l.transactionHash}:${l.logIndex}`, txHash: l.transactionHash, currency: tokens.get(l.address.toLowerCase() as Hex)!,
      from: l.args.from!, to: l.args.to!, amountMinor: l.args.value!, position: l.blockNumber.toString(),
      confirmations: Number(latest - l.blockNumber + 1n), final: l.blockNumber <= confirmed,
    }));
    return { transfers, nextPosition: (toBlock + 1n).toString(), caughtUp: toBlock === latest };
  }

  /** Where one log query from `fromBlock` ends: at `tip`, or after EVM_LOG_BLOCK_RANGE blocks (RPC providers cap log queries). */
  private lastBlockOfRead(fromBlock: bigint, tip: bigint): bigint {
    const rangeEnd = fromBlock + BigInt(this.deps.logBlockRange) - 1n;
    return tip < rangeEnd ? tip : rangeEnd;
  }

  async transferDepth(t: { txHash: string; position: string }): Promise<{ confirmations: number; final: boolean } | null> {
    const receipt = await this.node.client.getTransactionReceipt({ hash: t.txHash as Hex }).catch(() => null);
    if (!receipt || receipt.blockNumber.toString() !== t.position) return null;
    const { latest, confirmed } = await this.tips();
    return { confirmations: Number(latest - receipt.blockNumber + 1n), final: receipt.blockNumber <= confirmed };
  }

  async movementsOf(txHash: string): Promise<ChainMovement[] | null> {
    const notFound = (err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError || err instanceof TransactionNotFoundError) return null;
      throw err;
    };
    const receipt = await this.node.client.getTransactionReceipt({ hash: txHash as Hex }).catch(notFound);
    if (!receipt) return null;
    if (receipt.status !== 'success') return []; // reverted: it moved nothing
    const tokens = await this.servedTokens();
    const movements: ChainMovement[] = parseEventLogs({ abi: [TRANSFER_EVENT], logs: receipt.logs })
      .filter((l) => tokens.has(l.address.toLowerCase() as Hex))
      .map((l) => ({ to: l.args.to, currency: tokens.get(l.address.toLowerCase() as Hex)!, amountMinor: l.args.value, index: l.logIndex }));
    const tx = await this.node.client.getTransaction({ hash: txHash as Hex });
    if (tx.value > 0n && tx.to) movements.push({ to: tx.to, currency: this.nativeAsset, amountMinor: tx.value, index: -1 });
    return movements;
  }

  async treasuryHoldings(q: { currency: string; txHashes: string[] }): Promise<TreasuryHoldings> {
    const { confirmed } = await this.tips();
    const minor = await this.node.client.readContract({
      address: await this.node.token(q.currency), abi: erc20Abi, functionName: 'balanceOf', args: [this.deps.keys.treasury.address], blockNumber: confirmed,
    });
    const landed: string[] = [];
    for (const hash of q.txHashes) {
      const receipt = await this.receiptIfAny(hash);
      if (receipt?.status === 'success' && receipt.blockNumber <= confirmed) landed.push(hash);
    }
    return { position: confirmed.toString(), minor, landed };
  }

  async treasuryNative(txHashes: string[]): Promise<TreasuryNative> {
    const { confirmed } = await this.tips();
    const treasury = this.deps.keys.treasury.address;
    const minor = await this.node.client.getBalance({ address: treasury, blockNumber: confirmed });
    const costs: TreasuryNative['costs'] = [];
    for (const hash of txHashes) {
      const receipt = await this.receiptIfAny(hash);
      if (!receipt || receipt.blockNumber > confirmed || getAddress(receipt.from) !== getAddress(treasury)) continue;
      // Gas is paid whether or not the call succeeded; value moves only if it did.
      const value = receipt.status === 'success' ? (await this.node.client.getTransaction({ hash: hash as Hex })).value : 0n;
      costs.push({ txHash: hash, costMinor: receipt.gasUsed * receipt.effectiveGasPrice + value });
    }
    return { position: confirmed.toString(), minor, costs };
  }

  private receiptIfAny(hash: string) {
    return this.node.client.getTransactionReceipt({ hash: hash as Hex }).catch((err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    });
  }

  /** The token contracts of the chain's currencies that are set up here, by lower-cased address. */
  private async servedTokens(): Promise<Map<Hex, string>> {
    const tokens = new Map<Hex, string>();
    for (const currency of RAILS[this.chain].currencies) {
      try {
        tokens.set((await this.node.token(currency)).toLowerCase() as Hex, currency);
      } catch (err) {
        if (!(err instanceof ChainUnavailableError)) throw err;
      }
    }
    return tokens;
  }

  async balancesOf(address: string, assets: string[]): Promise<AssetBalance[]> {
    const { latest, confirmed } = await this.tips();
    const owner = getAddress(address);
    const read = async (asset: string, blockNumber: bigint) => (asset === this.nativeAsset
      ? this.node.client.getBalance({ address: owner, blockNumber })
      : this.node.client.readContract({ address: await this.node.token(asset), abi: erc20Abi, functionName: 'balanceOf', args: [owner], blockNumber }));
    return Promise.all(assets.map(async (asset) => {
      const [confirmedMinor, latestMinor] = await Promise.all([read(asset, confirmed), read(asset, latest)]);
      return { asset, confirmedMinor, latestMinor };
    }));
  }

  /** The newest block, and the newest one deep enough to count (finalized, or `confirmations` deep). */
  private async tips(): Promise<{ latest: bigint; confirmed: bigint }> {
    const client = this.node.client;
    const latest = await client.getBlockNumber();
    const confirmed = this.deps.depositFinality === 'finalized'
      ? (await client.getBlock({ blockTag: 'finalized' })).number
      : latest - BigInt(Math.max(0, this.deps.confirmations - 1));
    return { latest, confirmed: confirmed < 0n ? 0n : confirmed };
  }

  async estimatePayoutFee(): Promise<bigint> {
    const fees = await this.node.client.estimateFeesPerGas();
    return TOKEN_TRANSFER_GAS * fees.maxFeePerGas;
  }

  sendPayout(r: PayoutRequest): Promise<{ txHash: string }> {
    return this.payouts.send(r);
  }

  payoutStatus(idempotencyKey: string): Promise<PayoutStatus> {
    return this.payouts.status(idempotencyKey);
  }

  sendFromWallet(r: WalletSendRequest): Promise<{ txHash: string }> {
    return this.walletSends.send(r);
  }

  prepareWalletTransaction(
    r: WalletTransactionRequest, keep: (trx: Transaction<Database>, tx: PreparedWalletTransaction) => Promise<void>,
  ): Promise<PreparedWalletTransaction> {
    return this.walletSends.prepare(r, keep);
  }

  walletNonceUsedElsewhere(address: string, nonce: number): Promise<boolean> {
    // An MPC signing's transaction is stored only once signed: while the platform waits, none of its own has the nonce.
    return this.node.nonceTakenByAnother(getAddress(address), nonce, []);
  }

  sweepDeposit(q: SweepRequest): Promise<SweepStatus> {
    return this.sweeps.sweep(q);
  }

  sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint; gasMoney?: boolean }): Promise<{ txHash: string }> {
    return mintSandboxDeposit(this.node, this.deps.keys, q);
  }
}
