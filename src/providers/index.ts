import { createChainAdapters, type ChainAdapters } from '../chains';
import type { SandboxChainFunding } from '../chains/chain-adapter';
import type { Config } from '../config';
import type { Db } from '../db';
import { ASSET_SCALE } from '../domain/money';
import { RateSheetProvider, SandboxRateProvider, type RateProvider } from '../domain/quote';
import type { Environment } from '../db/schema';
import { providerAvailability, type ProviderAvailability } from './availability';
import { OperatorReviewIdentityProvider, SandboxIdentityProvider, type IdentityVerificationProvider } from './identity-verification';
import type { ChainRail } from '../domain/rails';
import type { KeyVault } from '../keys/key-vault';
import { SandboxRails, type RailAdapter, type SandboxRailControls } from './rails';

/**
 * The outside systems money moves through, built once per process from the configuration: what a
 * real provider implements (`rails`, `chains`, `rates`), and apart from it what only the sandbox
 * does on a developer's request (`sandbox`: deposits arriving, banks sending payments back).
 */
export interface MoneyProviders {
  rails: RailAdapter;
  chains: ChainAdapters;
  /** Per environment: the sandbox's fixed rates; live, the operator's rate sheet or pegs only. */
  rates: Record<Environment, RateProvider>;
  /** Per environment: the sandbox's deterministic vendor; live, operator review until a vendor is configured. */
  identity: Record<Environment, IdentityVerificationProvider>;
  /** Which rails, chains and providers are real per environment; live never falls back to a simulator. */
  availability: ProviderAvailability;
  sandbox: { rails: SandboxRailControls; chains: Record<ChainRail, SandboxChainFunding> };
  /** Seals and opens wallet private keys (docs/WALLETS.md). */
  keys: KeyVault;
}

/** `keys`: the process's key vault, built by its entry point (createKeyVault). */
export function createMoneyProviders(config: Config, db: Db, keys: KeyVault): MoneyProviders {
  const rails = new SandboxRails(db, config.SANDBOX_TIME_SCALE, (currency) => ASSET_SCALE[currency] ?? 2, config.RAIL_WEBHOOK_SECRET);
  const chains = createChainAdapters(config, db);
  return {
    rails,
    chains,
    rates: { sandbox: new SandboxRateProvider(config.SANDBOX_FX_RATES), production: new RateSheetProvider(config.LIVE_FX_RATES, 'live') },
    identity: { sandbox: new SandboxIdentityProvider(), production: new OperatorReviewIdentityProvider() },
    availability: providerAvailability(config),
    sandbox: { rails, chains },
    keys,
  };
}
