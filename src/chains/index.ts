import type { Config } from '../config';
import type { Db } from '../db';
import { CHAIN_RAILS, EVM_CHAINS, type ChainRail } from '../domain/rails';
import type { ChainAdapter } from './chain-adapter';
import { ChainKeys, EvmChainAdapter } from './evm';
import { SimulatedChainAdapter } from './simulated';

export type ChainAdapters = Record<ChainRail, ChainAdapter>;

/**
 * Every chain the platform moves money on: EVM chains over their JSON-RPC address (EVM_RPC_URLS:
 * local anvil nodes in the sandbox stack, real nodes in production), the others simulated.
 */
export function createChainAdapters(config: Pick<Config, 'EVM_RPC_URLS' | 'CHAIN_TREASURY_MNEMONIC' | 'EVM_CONFIRMATIONS' | 'EVM_LOG_BLOCK_RANGE'>, db: Db): ChainAdapters {
  const keys = new ChainKeys(config.CHAIN_TREASURY_MNEMONIC);
  const adapters = {} as ChainAdapters;
  for (const chain of CHAIN_RAILS) {
    if ((EVM_CHAINS as readonly string[]).includes(chain)) {
      const url = config.EVM_RPC_URLS?.[chain];
      adapters[chain] = url
        ? new EvmChainAdapter(chain as (typeof EVM_CHAINS)[number], url, { db, keys, confirmations: config.EVM_CONFIRMATIONS, logBlockRange: config.EVM_LOG_BLOCK_RANGE })
        : unavailableChain(chain);
    } else {
      adapters[chain] = new SimulatedChainAdapter(chain as 'solana' | 'stellar' | 'tron', db, config.CHAIN_TREASURY_MNEMONIC);
    }
  }
  return adapters;
}

export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError';
}

/** A chain without an RPC address: every call fails with an error the API turns into a 503. */
function unavailableChain(chain: ChainRail): ChainAdapter {
  const fail = async (): Promise<never> => {
    throw new ChainUnavailableError(`No RPC address is configured for ${chain} (EVM_RPC_URLS)`);
  };
  return {
    chain, nativeAsset: 'eth', depositAddress: () => { throw new ChainUnavailableError(`No RPC address is configured for ${chain}`); },
    currentPosition: fail, findDeposit: fail, estimatePayoutFee: fail, sendPayout: fail, payoutStatus: fail, sandboxDeposit: fail,
  };
}
