import { createChainAdapters, type ChainAdapters } from '../chains';
import type { SandboxChainFunding } from '../chains/chain-adapter';
import type { Config } from '../config';
import type { Db } from '../db';
import { ASSET_SCALE } from '../domain/money';
import { SandboxRateProvider, type RateProvider } from '../domain/quote';
import type { ChainRail } from '../domain/rails';
import { localKeyVault, type KeyVault } from '../keys/key-vault';
import { SandboxRails, type RailAdapter, type SandboxRailControls } from './rails';

/**
 * The outside systems money moves through, built once per process from the configuration: what a
 * real provider implements (`rails`, `chains`, `rates`), and apart from it what only the sandbox
 * does on a developer's request (`sandbox`: deposits arriving, banks sending payments back).
 */
export interface MoneyProviders {
  rails: RailAdapter;
  chains: ChainAdapters;
  rates: RateProvider;
  sandbox: { rails: SandboxRailControls; chains: Record<ChainRail, SandboxChainFunding> };
  /** Seals and opens wallet private keys (docs/WALLETS.md). */
  keys: KeyVault;
}

export function createMoneyProviders(config: Config, db: Db): MoneyProviders {
  const rails = new SandboxRails(db, config.SANDBOX_TIME_SCALE, (currency) => ASSET_SCALE[currency] ?? 2, config.RAIL_WEBHOOK_SECRET);
  const chains = createChainAdapters(config, db);
  const keys = localKeyVault({ kek: config.WALLET_KEK, previous: config.WALLET_KEK_PREVIOUS, dataDir: config.dataDir });
  return { rails, chains, rates: new SandboxRateProvider(config.SANDBOX_FX_RATES), sandbox: { rails, chains }, keys };
}
