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
import { SandboxRails, type RailAdapter, type RailPaymentRequest, type SandboxRailControls } from './rails';
import { BankFileRails } from './bank-files/bank-file-rails';
import { bankFileRailFor } from './bank-files/settings';

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
    rails: routedRails(config, db, rails),
    chains,
    rates: { sandbox: new SandboxRateProvider(config.SANDBOX_FX_RATES), production: new RateSheetProvider(config.LIVE_FX_RATES, 'live') },
    identity: { sandbox: new SandboxIdentityProvider(), production: new OperatorReviewIdentityProvider() },
    availability: providerAvailability(config),
    sandbox: { rails, chains },
    keys,
  };
}

/**
 * Each payment to the implementation its rail has in its environment: the bank's files where
 * RAIL_PROVIDERS (live) or SANDBOX_BANK_FILES (sandbox) say so, else the sandbox simulator (which
 * refuses live payments). A payment is read back from where its id says it is.
 */
function routedRails(config: Config, db: Db, sandbox: SandboxRails): RailAdapter {
  const bankFiles = new BankFileRails(db, {
    settlementSeconds: config.BANK_FILE_SETTLEMENT_SECONDS,
    recheckMs: Math.min(config.BANK_FILE_WINDOW_SECONDS ?? 300, 300) * 1000,
  });
  const adapterFor = (r: Pick<RailPaymentRequest, 'tenant' | 'rail'>) => (bankFileRailFor(config, r.tenant.environment, r.rail) ? bankFiles : sandbox);
  return {
    submitPayment: (r) => adapterFor(r).submitPayment(r),
    getPayment: (id) => (id.startsWith('bpay_') ? bankFiles.getPayment(id) : sandbox.getPayment(id)),
    parseWebhook: (request) => sandbox.parseWebhook(request),
  };
}
