import { createChainAdapters, type ChainAdapters } from '../chains';
import type { Config } from '../config';
import type { Db } from '../db';
import { ASSET_SCALE } from '../domain/money';
import { SandboxRateProvider, type RateProvider } from '../domain/quote';
import { SandboxRails } from './rails';

/** The outside systems money moves through, built once per process from the configuration. */
export interface MoneyProviders {
  rails: SandboxRails;
  chains: ChainAdapters;
  rates: RateProvider;
}

export function createMoneyProviders(config: Config, db: Db): MoneyProviders {
  return {
    rails: new SandboxRails(db, config.SANDBOX_TIME_SCALE, (currency) => ASSET_SCALE[currency] ?? 2, config.RAIL_WEBHOOK_SECRET),
    chains: createChainAdapters(config, db),
    rates: new SandboxRateProvider(config.SANDBOX_FX_RATES),
  };
}
