import {
  BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, createPublicClient, decodeErrorResult, encodeFunctionData, erc20Abi, getAddress,
  http, keccak256,
  type Abi, type Hex, type PublicClient, type TransactionReceipt,
} from 'viem';
import { ASSET_SCALE } from '../../domain/money';
import type { EvmChain } from '../../domain/rails';
import { ChainUnavailableError, PayoutRejectedError } from '../chain-adapter';
import stablecoin from '../../../contracts/Stablecoin.json';

export const STABLECOIN_ABI = stablecoin.abi as typeof stablecoin.abi;
export const stablecoinAbi = STABLECOIN_ABI as readonly unknown[] as Abi;

/** Gas a token transfer takes, with room to spare (an ERC-20 transfer uses ~35–55k). */
export const TOKEN_TRANSFER_GAS = 90_000n;

export const NATIVE_ASSET: Record<EvmChain, string> = { ethereum: 'eth', polygon: 'matic', arbitrum: 'eth', optimism: 'eth', base: 'eth', fpnet: 'fpn' };
/** Local chain ids, distinct per chain, for the anvil nodes. */
export const LOCAL_CHAIN_IDS: Record<EvmChain, number> = { ethereum: 31337, polygon: 31338, arbitrum: 31339, optimism: 31340, base: 31341, fpnet: 31342 };
/** The ids each chain is known by (mainnet, public testnet, local node): a node of another chain is refused. */
const KNOWN_CHAIN_IDS: Record<EvmChain, number[]> = {
  ethereum: [1, 11155111, LOCAL_CHAIN_IDS.ethereum],
  polygon: [137, 80002, LOCAL_CHAIN_IDS.polygon],
  arbitrum: [42161, 421614, LOCAL_CHAIN_IDS.arbitrum],
  optimism: [10, 11155420, LOCAL_CHAIN_IDS.optimism],
  base: [8453, 84532, LOCAL_CHAIN_IDS.base],
  // The platform's own chain has no public network: its nodes, wherever they run, use this id.
  fpnet: [LOCAL_CHAIN_IDS.fpnet],
};

/**
 * One EVM chain's node over JSON-RPC, as the payouts, sweeps and deposit scans share it: the chain id
 * and token contracts checked once, broadcasting that tolerates a re-send, receipts counted deep enough.
 */
export class EvmNode {
  readonly client: PublicClient;
  private chainId?: number;
  private readonly checkedTokens = new Map<string, Promise<Hex>>();

  constructor(
    readonly chain: EvmChain,
    rpcUrl: string,
    /** `tokenAddress` names a currency's contract, or throws ChainUnavailableError when there is none. */
    private readonly deps: { confirmations: number; tokenAddress: (currency: string) => Hex },
  ) {
    // No block-number cache: confirmations are counted from the latest block.
    this.client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }), cacheTime: 0 }) as PublicClient;
  }

  get nativeAsset(): string {
    return NATIVE_ASSET[this.chain];
  }

  /**
   * The currency's token contract, checked once per process: a contract is there, and it counts in
   * the asset's scale (a USDC address given for DAI would pay out 10^12 times too little, or too much).
   */
  token(currency: string): Promise<Hex> {
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

  /** The node's chain id, once it is known not to be another chain's (swapped EVM_RPC_URLS would sign payouts for the wrong chain). */
  async getChainId(): Promise<number> {
    if (this.chainId === undefined) {
      const id = await this.client.getChainId();
      const other = (Object.keys(KNOWN_CHAIN_IDS) as EvmChain[]).find((c) => c !== this.chain && KNOWN_CHAIN_IDS[c].includes(id));
      if (other) throw new ChainUnavailableError(`The ${this.chain} node (EVM_RPC_URLS) reports chain id ${id}, which is ${other}'s`);
      this.chainId = id;
    }
    return this.chainId;
  }

  async broadcast(raw: Hex) {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (err) {
      // Sent before (a retry after a crash): the chain already knows it, or has mined it.
      if (/already known|nonce too low|already imported|known transaction/i.test(String((err as Error).message))) return;
      throw err;
    }
  }

  /**
   * A token transfer of `currency` from `from`, tried on the node before anything is signed: its
   * contract and call data, or PayoutRejectedError with the contract's reason when it would revert
   * (a blocked address, a balance too small) — a refusal that is final.
   */
  async tokenTransfer(q: { currency: string; from: Hex; to: string; amountMinor: bigint }): Promise<{ token: Hex; data: Hex }> {
    const token = await this.token(q.currency);
    const data = encodeFunctionData({ abi: stablecoinAbi, functionName: 'transfer', args: [getAddress(q.to), q.amountMinor] });
    try {
      await this.client.call({ account: q.from, to: token, data });
    } catch (err) {
      const reason = revertReason(err);
      if (reason) throw new PayoutRejectedError(reason);
      throw err;
    }
    return { token, data };
  }

  /**
   * Whether `nonce` of `address` was used, as deep as confirmations require, by a transaction that is
   * none of `hashes`: then none of them can ever be mined ("nonce too low" does not mean sent).
   */
  async nonceTakenByAnother(address: Hex, nonce: number, hashes: Hex[]): Promise<boolean> {
    const latest = await this.client.getBlockNumber();
    const deep = latest - BigInt(this.deps.confirmations) + 1n;
    if (deep < 0n || (await this.client.getTransactionCount({ address, blockNumber: deep })) <= nonce) return false;
    for (const hash of hashes) if (await this.client.getTransactionReceipt({ hash }).catch(() => null)) return false;
    return true;
  }

  /** Whether a receipt is as deep as the chain's confirmations require. */
  async isDeepEnough(receipt: TransactionReceipt): Promise<boolean> {
    const latest = await this.client.getBlockNumber();
    return latest - receipt.blockNumber + 1n >= BigInt(this.deps.confirmations);
  }

  /** The receipt of a stored transaction once it has its confirmations; sent again if the node lost it. */
  async settledReceipt(signed: Hex): Promise<TransactionReceipt | null> {
    const hash = keccak256(signed);
    const receipt = await this.client.getTransactionReceipt({ hash }).catch(() => null);
    if (!receipt) {
      if (!(await this.client.getTransaction({ hash }).catch(() => null))) await this.broadcast(signed);
      return null;
    }
    return (await this.isDeepEnough(receipt)) ? receipt : null;
  }
}

/** The reason a call reverted (a custom error's name), or undefined when it failed for another cause. */
export function revertReason(err: unknown): string | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError || (e as { data?: unknown }).data !== undefined);
  if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName ?? reverted.reason ?? 'reverted';
  const data = (reverted as { data?: Hex } | null)?.data;
  if (typeof data === 'string' && data.startsWith('0x')) {
    try {
      const decoded = decodeErrorResult({ abi: stablecoinAbi, data });
      return `${decoded.errorName}(${(decoded.args ?? []).join(', ')})`;
    } catch {
      return 'reverted';
    }
  }
  return /revert/i.test(err.message) ? 'reverted' : undefined;
}
