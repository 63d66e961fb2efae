import type { Endorsement } from './kyc';
import { ASSET_SCALE } from './money';
import { SEPA_COUNTRIES } from './regions';
import { isBankBusinessDay, type BankCalendar } from './bank-calendars';

/**
 * The payment rails of spec 2.5: which currencies each carries, which external account it pays,
 * which endorsement it needs, its amount bounds and how it behaves in time. One table, read by the
 * API (validation, quotes), the workflow (return windows) and the sandbox simulators (settlement).
 */
export const FIAT_RAILS = ['ach', 'ach_push', 'ach_same_day', 'wire', 'swift', 'sepa', 'faster_payments', 'pix', 'spei'] as const;
// `fpnet`: the platform's own chain (spec 2.4, docs/TRANSFERS.md): EVM, one-second blocks, its native asset fpn and USDC.
export const EVM_CHAINS = ['ethereum', 'polygon', 'arbitrum', 'optimism', 'base', 'fpnet'] as const;
// Solana and Bitcoin run on real nodes over JSON-RPC (the sandbox's LiteSVM node and btcd locally); stellar and tron on the sandbox's simulator.
export const SIMULATED_CHAINS = ['stellar', 'tron'] as const;
export const CHAIN_RAILS = [...EVM_CHAINS, 'solana', 'bitcoin', ...SIMULATED_CHAINS] as const;
export const PAYMENT_RAILS = [...FIAT_RAILS, ...CHAIN_RAILS] as const;
/** The chains whose addresses an external account may hold: every chain rail. */
export const CRYPTO_CHAINS = CHAIN_RAILS;

export type FiatRail = (typeof FIAT_RAILS)[number];
export type EvmChain = (typeof EVM_CHAINS)[number];
export type SimulatedChain = (typeof SIMULATED_CHAINS)[number];
export type ChainRail = (typeof CHAIN_RAILS)[number];
export type PaymentRail = (typeof PAYMENT_RAILS)[number];
export type CryptoChain = (typeof CRYPTO_CHAINS)[number];

export const isChainRail = (rail: string): rail is ChainRail => (CHAIN_RAILS as readonly string[]).includes(rail);
export const isEvmChain = (rail: string): rail is EvmChain => (EVM_CHAINS as readonly string[]).includes(rail);
export const isSimulatedChain = (rail: string): rail is SimulatedChain => (SIMULATED_CHAINS as readonly string[]).includes(rail);

const HOUR = 3600_000;
const DAY = 24 * HOUR;

export interface FiatRailProfile {
  kind: 'fiat';
  currencies: readonly string[];
  /** Kind of external account a payout on this rail goes to. */
  accountType: 'us_bank_account' | 'international_bank_account' | 'mx_bank_account';
  /** The countries of the accounts this rail reaches, as the error names them (undefined: any of its account type). */
  reaches?: { countries: ReadonlySet<string>; description: string };
  /**
   * The platform's collection account in the sandbox, where customers send fiat deposits on this rail
   * (with the transfer's deposit reference). Production reads its own from the provider.
   */
  collectionAccount: Readonly<Record<string, string>>;
  endorsement: Endorsement;
  /** Amount bounds of one payment, in whole units of the currency. */
  minUnits: bigint;
  maxUnits: bigint;
  /**
   * Settlement on the real clock: instant rails settle in seconds at any hour; batch rails settle on
   * a business day, the same one when submitted before the cut-off (UTC hour), otherwise the next.
   */
  settlement: { instantMs: number } | { cutoffUtcHour: number; businessDaysAfter: number; calendar: BankCalendar };
  /** How long after settlement the receiving bank may still return a payment. */
  returnWindowMs: number;
  /** Codes the sandbox uses when the receiving bank rejects (before settlement) or returns (after). */
  rejectCode: string;
  returnCode: string;
}

export interface ChainRailProfile {
  kind: 'chain';
  currencies: readonly string[];
  endorsement: Endorsement;
  /** Amount bounds of one payment, in whole units of the asset; `minMinor` where the least is a fraction of a unit. */
  minUnits: bigint;
  minMinor?: bigint;
  maxUnits: bigint;
}

const COLLECTION_ACCOUNTS = {
  us: { bank_name: 'Sandbox Platform Bank', bank_routing_number: '026009593', bank_account_number: '9000012345', bank_beneficiary_name: 'Financial Platform FBO Customers' },
  swift: { bank_name: 'Sandbox Platform Bank', bic: 'BOFAUS3NXXX', bank_account_number: '9000012345', bank_beneficiary_name: 'Financial Platform FBO Customers' },
  sepa: { bank_name: 'Sandbox Platform Bank Europe', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', bank_beneficiary_name: 'Financial Platform Europe' },
  faster_payments: { bank_name: 'Sandbox Platform Bank UK', sort_code: '040004', account_number: '12345678', bank_beneficiary_name: 'Financial Platform UK' },
  pix: { bank_name: 'Sandbox Platform Banco', pix_key: 'pagamentos@sandbox.financial-platform.example', bank_beneficiary_name: 'Financial Platform Brasil' },
  spei: { bank_name: 'Sandbox Platform Banco MX', clabe: '002010077777777771', bank_beneficiary_name: 'Financial Platform Mexico' },
};

export const RAILS: Record<PaymentRail, FiatRailProfile | ChainRailProfile> = {
  // ACH: batches settle the next business day; same-day ACH the same day before its cut-off. Receiving
  // banks return within two banking days (R01–R04…); unauthorised-debit returns (R10) take 60 days.
  ach: fiat('us_bank_account', ['usd'], 'can_ach_transfer', 1n, 1_000_000n, { cutoffUtcHour: 21, businessDaysAfter: 1, calendar: 'federal_reserve' }, 2 * DAY, 'R03', 'R02', COLLECTION_ACCOUNTS.us),
  ach_push: fiat('us_bank_account', ['usd'], 'can_ach_transfer', 1n, 1_000_000n, { cutoffUtcHour: 21, businessDaysAfter: 1, calendar: 'federal_reserve' }, 2 * DAY, 'R03', 'R02', COLLECTION_ACCOUNTS.us),
  ach_same_day: fiat('us_bank_account', ['usd'], 'can_ach_transfer', 1n, 1_000_000n, { cutoffUtcHour: 20, businessDaysAfter: 0, calendar: 'federal_reserve' }, 2 * DAY, 'R03', 'R02', COLLECTION_ACCOUNTS.us),
  // Fedwire settles on submission during its operating day; a wire is final but may be sent back.
  wire: fiat('us_bank_account', ['usd'], 'can_wire_transfer', 1n, 10_000_000n, { cutoffUtcHour: 22, businessDaysAfter: 0, calendar: 'federal_reserve' }, 5 * DAY, 'AC01', 'AC04', COLLECTION_ACCOUNTS.us),
  swift: fiat('international_bank_account', ['usd'], 'can_swift_transfer', 1n, 10_000_000n, { cutoffUtcHour: 16, businessDaysAfter: 2, calendar: 'weekdays' }, 10 * DAY, 'AC01', 'AC04', COLLECTION_ACCOUNTS.swift),
  sepa: fiat('international_bank_account', ['eur'], 'can_sepa_transfer', 1n, 1_000_000n, { cutoffUtcHour: 15, businessDaysAfter: 1, calendar: 'target2' }, 3 * DAY, 'AC01', 'AC04', COLLECTION_ACCOUNTS.sepa,
    { countries: SEPA_COUNTRIES, description: 'accounts in the SEPA zone' }),
  faster_payments: fiat('international_bank_account', ['gbp'], 'can_faster_payments_transfer', 1n, 1_000_000n, { instantMs: 2_000 }, 2 * DAY, 'AC01', 'AC04',
    COLLECTION_ACCOUNTS.faster_payments, { countries: new Set(['GB']), description: 'UK accounts' }),
  pix: fiat('international_bank_account', ['brl'], 'can_pix_transfer', 1n, 1_000_000n, { instantMs: 1_000 }, 2 * DAY, 'AC01', 'MD06', COLLECTION_ACCOUNTS.pix,
    { countries: new Set(['BR']), description: 'Brazilian accounts' }),
  spei: fiat('mx_bank_account', ['mxn'], 'can_spei_transfer', 1n, 10_000_000n, { instantMs: 3_000 }, 2 * DAY, 'AC01', 'AC04', COLLECTION_ACCOUNTS.spei),
  ethereum: chain(['usdc', 'usdt', 'dai', 'pyusd']),
  polygon: chain(['usdc', 'usdt']),
  arbitrum: chain(['usdc', 'usdt']),
  optimism: chain(['usdc', 'usdt']),
  base: chain(['usdc', 'usdt']),
  fpnet: chain(['usdc']),
  solana: chain(['usdc', 'usdt']),
  // From 10,000 satoshis (0.0001 BTC): a smaller payout would lose much of itself to its fee.
  bitcoin: { ...chain(['btc']), minUnits: 0n, minMinor: 10_000n, maxUnits: 1_000n },
  stellar: chain(['usdc']),
  tron: chain(['usdt']),
};

function fiat(
  accountType: FiatRailProfile['accountType'], currencies: string[], endorsement: Endorsement, minUnits: bigint, maxUnits: bigint,
  settlement: FiatRailProfile['settlement'], returnWindowMs: number, rejectCode: string, returnCode: string,
  collectionAccount: FiatRailProfile['collectionAccount'], reaches?: FiatRailProfile['reaches'],
): FiatRailProfile {
  return { kind: 'fiat', accountType, currencies, endorsement, minUnits, maxUnits, settlement, returnWindowMs, rejectCode, returnCode, collectionAccount, reaches };
}

function chain(currencies: string[]): ChainRailProfile {
  return { kind: 'chain', currencies, endorsement: 'can_trade_stablecoins', minUnits: 1n, maxUnits: 1_000_000n };
}

/** The amount bounds of one payment on `rail`, in minor units of `currency`. */
export function railBoundsMinor(rail: PaymentRail, currency: string): { min: bigint; max: bigint } {
  const unit = 10n ** BigInt(ASSET_SCALE[currency]);
  const profile = RAILS[rail];
  return { min: (profile.kind === 'chain' ? profile.minMinor : undefined) ?? profile.minUnits * unit, max: profile.maxUnits * unit };
}

/** Return codes a sandbox return may carry, with their meaning (NACHA R-codes, ISO 20022 reasons). */
export const RETURN_CODES: Record<string, string> = {
  R01: 'Insufficient funds',
  R02: 'Account closed',
  R03: 'No account / unable to locate account',
  R04: 'Invalid account number',
  R10: 'Customer advises not authorized',
  R16: 'Account frozen',
  R29: 'Corporate customer advises not authorized',
  AC01: 'Incorrect account number',
  AC04: 'Closed account number',
  AC06: 'Blocked account',
  AM05: 'Duplication',
  MD06: 'Refund request by end customer',
  MS03: 'Reason not specified',
};

/**
 * When a payment submitted at `submittedAt` settles on the real clock. Instant rails: after a few
 * seconds, at any hour. Batch rails: on a business day (weekends are not), the submission day when
 * it is a business day before the cut-off, else the next one; then `businessDaysAfter` more.
 * Same-day rails settle 30 minutes after submission on their day; the others at 17:00 UTC.
 */
export function realSettlementTime(profile: FiatRailProfile, submittedAt: Date): Date {
  if ('instantMs' in profile.settlement) return new Date(submittedAt.getTime() + profile.settlement.instantMs);
  const { cutoffUtcHour, businessDaysAfter, calendar } = profile.settlement;
  const isBusinessDay = (d: Date) => isBankBusinessDay(calendar, d);
  const day = new Date(Date.UTC(submittedAt.getUTCFullYear(), submittedAt.getUTCMonth(), submittedAt.getUTCDate()));
  const nextDay = () => day.setUTCDate(day.getUTCDate() + 1);
  const onSubmissionDay = isBusinessDay(day) && submittedAt.getUTCHours() < cutoffUtcHour;
  if (!onSubmissionDay) do nextDay(); while (!isBusinessDay(day));
  for (let left = businessDaysAfter; left > 0; ) {
    nextDay();
    if (isBusinessDay(day)) left--;
  }
  if (onSubmissionDay && businessDaysAfter === 0) return new Date(submittedAt.getTime() + 30 * 60_000);
  return new Date(day.getTime() + 17 * HOUR);
}
