import { isLoopbackUrl, type Config } from '../config';
import type { Db } from '../db';
import { CHAIN_RAILS, isEvmChain, isSimulatedChain, type ChainRail } from '../domain/rails';
import { ChainUnavailableError, type ChainAdapter, type SandboxChainFunding } from './chain-adapter';
import { ChainKeys, EvmChainAdapter, sandboxTokenAddress } from './evm';
import { SimulatedChainAdapter } from './simulated';

export { ChainUnavailableError };

export type ChainAdapters = Record<ChainRail, ChainAdapter>;
/** Each chain's adapter, which in this code base also funds sandbox deposits (MoneyProviders.sandbox.chains). */
type SandboxableChainAdapters = Record<ChainRail, ChainAdapter & SandboxChainFunding>;

/**
 * Every chain the platform moves money on: EVM chains over their JSON-RPC address (EVM_RPC_URLS:
 * local anvil nodes in the sandbox stack, real nodes in production), the others simulated.
 */
export function createChainAdapters(
  config: Pick<Config, 'EVM_RPC_URLS' | 'EVM_TOKEN_ADDRESSES' | 'CHAIN_TREASURY_MNEMONIC' | 'EVM_CONFIRMATIONS' | 'EVM_DEPOSIT_FINALITY' | 'EVM_LOG_BLOCK_RANGE'>,
  db: Db,
): SandboxableChainAdapters {
  const keys = new ChainKeys(config.CHAIN_TREASURY_MNEMONIC);
  const adapters = {} as SandboxableChainAdapters;
  for (const chain of CHAIN_RAILS) {
    if (isEvmChain(chain)) {
      const evmChain = chain;
      const url = config.EVM_RPC_URLS?.[chain];
      const configured = config.EVM_TOKEN_ADDRESSES?.[evmChain] ?? {};
      // The project's sandbox stablecoins exist only on the local nodes it deploys them to; elsewhere
      // a currency needs its real contract, named in EVM_TOKEN_ADDRESSES.
      const tokenAddress = (currency: string) => {
        const address = configured[currency] ?? (url && isLoopbackUrl(url) ? sandboxTokenAddress(keys, evmChain, currency) : undefined);
        if (!address) throw new ChainUnavailableError(`No ${currency} token contract is configured for ${chain} (EVM_TOKEN_ADDRESSES)`);
        return address;
      };
      // A deposit is final when no reorg can undo it; counting blocks is for local nodes (or on request).
      const depositFinality = config.EVM_DEPOSIT_FINALITY ?? (url && isLoopbackUrl(url) ? 'confirmations' : 'finalized');
      adapters[chain] = url
        ? new EvmChainAdapter(evmChain, url, {
          db, keys, confirmations: config.EVM_CONFIRMATIONS, depositFinality, logBlockRange: config.EVM_LOG_BLOCK_RANGE, tokenAddress,
        })
        : unavailableChain(chain);
    } else if (isSimulatedChain(chain)) {
      adapters[chain] = new SimulatedChainAdapter(chain, db, config.CHAIN_TREASURY_MNEMONIC);
    }
  }
  return adapters;
}

/** A chain without an RPC address: every call fails with an error the API turns into a 503. */
function unavailableChain(chain: ChainRail): ChainAdapter & SandboxChainFunding {
  const fail = async (): Promise<never> => {
    throw new ChainUnavailableError(`No RPC address is configured for ${chain} (EVM_RPC_URLS)`);
  };
  return {
    chain, nativeAsset: 'eth', sweepsDeposits: true, walletsPayGas: true, sendFromWallet: fail, prepareWalletTransaction: fail, isTokenContract: () => false, depositAddress: () => { throw new ChainUnavailableError(`No RPC address is configured for ${chain}`); },
    checkCurrency: fail, currentPosition: fail, receiverBlocked: fail, findTransfersTo: fail, estimatePayoutFee: fail, sendPayout: fail, payoutStatus: fail, sweepDeposit: fail, sandboxDeposit: fail,
    balancesOf: fail, readTokenTransfers: fail, transferDepth: fail,
  };
}
