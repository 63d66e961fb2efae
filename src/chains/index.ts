import { isLoopbackUrl, type Config } from '../config';
import type { Db } from '../db';
import { CHAIN_RAILS, isEvmChain, isSimulatedChain, type ChainRail } from '../domain/rails';
import { ChainUnavailableError, type ChainAdapter, type SandboxChainFunding } from './chain-adapter';
import { ChainKeys, EvmChainAdapter, sandboxTokenAddress } from './evm';
import { SimulatedChainAdapter } from './simulated';
import { SolanaChainAdapter } from './solana/adapter';
import { SolanaKeys } from './solana/keys';
import { address } from '@solana/kit';
import { SOLANA_MAINNET_MINTS } from '../config-solana';
import { BitcoinChainAdapter } from './bitcoin/adapter';
import { BitcoinKeys } from './bitcoin/keys';

export { ChainUnavailableError };

export type ChainAdapters = Record<ChainRail, ChainAdapter>;
/** Each chain's adapter, which in this code base also funds sandbox deposits (MoneyProviders.sandbox.chains). */
type SandboxableChainAdapters = Record<ChainRail, ChainAdapter & SandboxChainFunding>;

/**
 * Every chain the platform moves money on: EVM chains over their JSON-RPC address (EVM_RPC_URLS:
 * local anvil nodes in the sandbox stack, real nodes in production), solana over SOLANA_RPC_URL (the
 * sandbox's LiteSVM node locally), bitcoin over BITCOIN_RPC_URL (the sandbox's btcd locally), stellar
 * and tron simulated.
 */
export function createChainAdapters(
  config: Pick<Config, 'EVM_RPC_URLS' | 'EVM_TOKEN_ADDRESSES' | 'CHAIN_TREASURY_MNEMONIC' | 'EVM_CONFIRMATIONS' | 'EVM_DEPOSIT_FINALITY' | 'EVM_LOG_BLOCK_RANGE'
  > & Partial<Pick<Config, 'SOLANA_RPC_URL' | 'SOLANA_TOKEN_MINTS' | 'SOLANA_DEPOSIT_COMMITMENT' | BitcoinSetting>>,
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
    } else if (chain === 'solana') {
      adapters.solana = solanaAdapter(config, db);
    } else if (chain === 'bitcoin') {
      adapters.bitcoin = bitcoinAdapter(config, db);
    } else if (isSimulatedChain(chain)) {
      adapters[chain] = new SimulatedChainAdapter(chain, db, config.CHAIN_TREASURY_MNEMONIC);
    }
  }
  return adapters;
}

/**
 * Solana over SOLANA_RPC_URL: on a local node (the sandbox's) its own stablecoin mints and deposits
 * counted once confirmed; elsewhere the configured mints, or mainnet's, and deposits once finalized.
 */
function solanaAdapter(config: Partial<Pick<Config, 'SOLANA_RPC_URL' | 'SOLANA_TOKEN_MINTS' | 'SOLANA_DEPOSIT_COMMITMENT'>> & Pick<Config, 'CHAIN_TREASURY_MNEMONIC'>, db: Db) {
  const url = config.SOLANA_RPC_URL;
  if (!url) return unavailableChain('solana', 'SOLANA_RPC_URL');
  const local = isLoopbackUrl(url);
  const keys = new SolanaKeys(config.CHAIN_TREASURY_MNEMONIC);
  const mint = (currency: string) => {
    const found = config.SOLANA_TOKEN_MINTS?.[currency] ?? (local ? keys.sandboxMint(currency)?.address : SOLANA_MAINNET_MINTS[currency]);
    if (!found) throw new ChainUnavailableError(`No ${currency} mint is configured for solana (SOLANA_TOKEN_MINTS)`);
    return address(found);
  };
  return new SolanaChainAdapter(url, { db, keys, mint, commitment: config.SOLANA_DEPOSIT_COMMITMENT ?? (local ? 'confirmed' : 'finalized') });
}

type BitcoinSetting = 'BITCOIN_RPC_URL' | 'BITCOIN_NETWORK' | 'BITCOIN_CONFIRMATIONS' | 'BITCOIN_MIN_FEE_RATE' | 'BITCOIN_MAX_FEE_RATE' | 'BITCOIN_RBF_AFTER_SECONDS' | 'BITCOIN_INDEX_REUSE_MS' | 'BITCOIN_COIN_WAIT_MS';

/** Bitcoin over BITCOIN_RPC_URL: regtest on a local node (the sandbox's btcd) unless BITCOIN_NETWORK says otherwise, mainnet elsewhere. */
function bitcoinAdapter(config: Partial<Pick<Config, BitcoinSetting>> & Pick<Config, 'CHAIN_TREASURY_MNEMONIC'>, db: Db) {
  const url = config.BITCOIN_RPC_URL;
  if (!url) return unavailableChain('bitcoin', 'BITCOIN_RPC_URL');
  const network = config.BITCOIN_NETWORK ?? (isLoopbackUrl(url) ? 'regtest' : 'mainnet');
  return new BitcoinChainAdapter(url, {
    db, keys: new BitcoinKeys(config.CHAIN_TREASURY_MNEMONIC, network), confirmations: config.BITCOIN_CONFIRMATIONS ?? 6,
    feeRates: { min: BigInt(config.BITCOIN_MIN_FEE_RATE ?? 2), max: BigInt(config.BITCOIN_MAX_FEE_RATE ?? 1_000) }, rbfAfterMs: (config.BITCOIN_RBF_AFTER_SECONDS ?? 1_800) * 1000,
    indexReuseMs: config.BITCOIN_INDEX_REUSE_MS ?? 250, coinWaitMs: config.BITCOIN_COIN_WAIT_MS ?? 8_000,
  });
}

/** A chain without an RPC address: every call fails with an error the API turns into a 503. */
function unavailableChain(chain: ChainRail, setting = 'EVM_RPC_URLS'): ChainAdapter & SandboxChainFunding {
  const fail = async (): Promise<never> => {
    throw new ChainUnavailableError(`No RPC address is configured for ${chain} (${setting})`);
  };
  return {
    chain, nativeAsset: ({ solana: 'sol', bitcoin: 'btc' } as Record<string, string>)[chain] ?? 'eth', sweepsDeposits: true, walletsPayGas: true, sendFromWallet: fail, prepareWalletTransaction: fail, isTokenContract: () => false, depositAddress: () => { throw new ChainUnavailableError(`No RPC address is configured for ${chain} (${setting})`); },
    checkCurrency: fail, currentPosition: fail, receiverRefusal: fail, findTransfersTo: fail, estimatePayoutFee: fail, sendPayout: fail, payoutStatus: fail, sweepDeposit: fail, sandboxDeposit: fail,
    balancesOf: fail, readTokenTransfers: fail, transferDepth: fail,
  };
}
