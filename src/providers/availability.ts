import type { Config } from '../config';
import type { Environment } from '../db/schema';
import { FIAT_RAILS, isEvmChain, isSimulatedChain, PAYMENT_RAILS, type PaymentRail } from '../domain/rails';
import { bankFileRailFor } from './bank-files/settings';

/**
 * Which outside systems are real for each environment (docs/API.md, "Live fails closed"). The
 * sandbox runs on simulators; the live environment only on an implementation that is real and
 * configured, and anything else is unavailable to live keys (503, nothing created), never simulated.
 */
export interface ProviderAvailability {
  /** Why `rail` cannot move money for keys of `environment`; undefined when it can. */
  railUnavailable(environment: Environment, rail: PaymentRail): string | undefined;
  /** Whether quotes across currencies (not a stablecoin at its peg) have a rate source. */
  marketRates(environment: Environment): boolean;
  /** What the live environment runs on, for the start-up banner, the log and /readyz. */
  live: LiveSummary;
}

export interface LiveSummary {
  real: { rails: PaymentRail[]; rates: string | null; identity: string | null };
  unavailable: { rails: PaymentRail[]; rates: string | null; identity: string | null };
}

/**
 * The live implementations this build has. A fiat rail is real where RAIL_PROVIDERS gives it the
 * bank's file interface (ACH and SEPA today); the others have none and run in the sandbox only. EVM
 * chains, solana and bitcoin are real wherever an RPC address is configured; stellar and tron exist only as the
 * sandbox's simulator.
 */
function liveRailUnavailable(config: Pick<Config, 'EVM_RPC_URLS' | 'SOLANA_RPC_URL' | 'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES'> & Partial<Pick<Config, 'BITCOIN_RPC_URL'>>, rail: PaymentRail): string | undefined {
  if ((FIAT_RAILS as readonly string[]).includes(rail)) {
    return bankFileRailFor(config, 'production', rail) ? undefined : `${rail} has no live provider configured; it runs in the sandbox only`;
  }
  if (isSimulatedChain(rail)) return `${rail} has no live node configured; it runs on the sandbox's simulator only`;
  if (rail === 'solana' && !config.SOLANA_RPC_URL) return 'solana has no RPC address configured (SOLANA_RPC_URL)';
  if (rail === 'bitcoin' && !config.BITCOIN_RPC_URL) return 'bitcoin has no node configured (BITCOIN_RPC_URL)';
  if (isEvmChain(rail) && !config.EVM_RPC_URLS?.[rail]) return `${rail} has no RPC address configured (EVM_RPC_URLS)`;
  return undefined;
}

export function providerAvailability(config: Pick<Config, 'EVM_RPC_URLS' | 'SOLANA_RPC_URL' | 'LIVE_FX_RATES' | 'RAIL_PROVIDERS' | 'SANDBOX_BANK_FILES'> & Partial<Pick<Config, 'BITCOIN_RPC_URL'>>): ProviderAvailability {
  const liveUnavailable = new Map(PAYMENT_RAILS.map((rail) => [rail, liveRailUnavailable(config, rail)] as const));
  const liveRates = Object.keys(config.LIVE_FX_RATES ?? {}).length > 0;
  const realRails = PAYMENT_RAILS.filter((r) => !liveUnavailable.get(r));
  return {
    railUnavailable: (environment, rail) => (environment === 'sandbox' ? undefined : liveUnavailable.get(rail)),
    marketRates: (environment) => environment === 'sandbox' || liveRates,
    live: {
      real: { rails: realRails, rates: liveRates ? 'rate sheet (LIVE_FX_RATES)' : null, identity: null },
      unavailable: {
        rails: PAYMENT_RAILS.filter((r) => liveUnavailable.get(r)),
        rates: liveRates ? null : 'market rates (no LIVE_FX_RATES): stablecoin pegs only',
        identity: 'identity verification vendor: every KYC submission goes to manual review',
      },
    },
  };
}

/** One line for the start-up banner and log. */
export function describeLive(live: LiveSummary): string {
  return [
    `live: real ${live.real.rails.length ? live.real.rails.join(', ') : 'no rail'}${live.real.rates ? `, ${live.real.rates}` : ''}`,
    `unavailable ${live.unavailable.rails.join(', ')}${live.unavailable.rates ? `; ${live.unavailable.rates}` : ''}; ${live.unavailable.identity}`,
  ].join('; ');
}
