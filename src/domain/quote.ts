import { ASSET_SCALE } from './money';

/**
 * Exchange rates. The sandbox provider answers fixed mid-market rates (configurable with
 * SANDBOX_FX_RATES); live answers the operator's rate sheet (LIVE_FX_RATES), or only pegs without
 * one; a market-data provider plugs in behind the same interface.
 */
export interface RateProvider {
  /** Units of `to` for one unit of `from`, as a decimal string with up to 8 decimals. */
  rate(from: string, to: string): Promise<string>;
}

/** Stablecoins are pegged one to one to their fiat currency. */
export const PEG: Record<string, string> = { usdc: 'usd', usdt: 'usd', pyusd: 'usd', dai: 'usd' };
const family = (currency: string) => PEG[currency] ?? currency;
/** One currency, or a stablecoin and its fiat currency (or two stablecoins of one peg): no market rate needed. */
export const samePeg = (a: string, b: string) => family(a) === family(b);

/** US dollars per unit, sandbox mid-market. Native gas assets are here to price network fees. */
export const DEFAULT_SANDBOX_USD_RATES: Record<string, string> = {
  usd: '1', eur: '1.08', gbp: '1.27', brl: '0.18', mxn: '0.055', eth: '3000', matic: '0.5', fpn: '1', sol: '150', xlm: '0.1', trx: '0.12', btc: '60000',
};

const RATE_DECIMALS = 8;

function toFixed(decimal: string, decimals: number): bigint {
  const [whole, frac = ''] = decimal.split('.');
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt((frac + '0'.repeat(decimals)).slice(0, decimals) || '0');
}

function fromFixed(value: bigint, decimals: number): string {
  const unit = 10n ** BigInt(decimals);
  const frac = (value % unit).toString().padStart(decimals, '0').replace(/0+$/, '');
  return frac ? `${value / unit}.${frac}` : `${value / unit}`;
}

/** No rate source serves this pair here (the live environment without a configured rate sheet): a 503. */
export class RateUnavailableError extends Error {
  override readonly name = 'RateUnavailableError';
}

/**
 * Rates from a sheet of US dollars per unit: the sandbox's fixed mid-market rates, or the live rate
 * sheet an operator configures (LIVE_FX_RATES). Stablecoins always answer their peg.
 */
export class RateSheetProvider implements RateProvider {
  private readonly usdPerUnit: Record<string, string>;

  constructor(usdPerUnit: Record<string, string>, private readonly what: string) {
    this.usdPerUnit = { usd: '1', ...usdPerUnit };
  }

  async rate(from: string, to: string): Promise<string> {
    const [a, b] = [family(from), family(to)];
    if (a === b) return '1';
    const usdA = this.usdPerUnit[a];
    const usdB = this.usdPerUnit[b];
    if (!usdA || !usdB) throw new RateUnavailableError(`No ${this.what} rate for ${from}/${to}`);
    // Rounded down to 8 decimals: never quote more than the market gives.
    return fromFixed((toFixed(usdA, RATE_DECIMALS) * 10n ** BigInt(RATE_DECIMALS)) / toFixed(usdB, RATE_DECIMALS), RATE_DECIMALS);
  }
}

export class SandboxRateProvider extends RateSheetProvider {
  constructor(overrides: Record<string, string> = {}) {
    super({ ...DEFAULT_SANDBOX_USD_RATES, ...overrides }, 'sandbox');
  }
}

/** Converts minor units of one asset to another at `rate`, rounding down (the payer never gets more than quoted). */
export function convertMinor(amountMinor: bigint, fromScale: number, toScale: number, rate: string): bigint {
  const r = toFixed(rate, RATE_DECIMALS);
  return (amountMinor * r * 10n ** BigInt(toScale)) / (10n ** BigInt(fromScale) * 10n ** BigInt(RATE_DECIMALS));
}

/**
 * The platform's exchange fee in basis points: nothing within one currency, 10 bp between a fiat
 * currency and its stablecoins (on- and off-ramps), 50 bp across currencies.
 */
export function exchangeFeeBps(from: string, to: string): bigint {
  if (from === to) return 0n;
  return family(from) === family(to) ? 10n : 50n;
}

export interface Receipt {
  initialMinor: bigint;
  developerFeeMinor: bigint;
  exchangeFeeMinor: bigint;
  subtotalMinor: bigint;
  exchangeRate: string;
  /** In the destination asset. */
  gasFeeMinor: bigint;
  /** In the destination asset: the SWIFT fees the sender pays (swift_charges), 0 elsewhere. */
  swiftFeeMinor: bigint;
  /** In the destination asset: what the receiver gets. */
  finalMinor: bigint;
}

export class QuoteError extends Error {}

/**
 * Who pays a SWIFT payment's fees (`swift_charges`), with the sandbox's documented fees in cents of
 * usd (docs/TRANSFERS.md): the sending bank's 15.00 and the correspondent and receiving banks' 25.00.
 * `senderFeeMinor` comes out of the transfer before it is sent (receipt `swift_fee`);
 * `beneficiaryDeductionsMinor` is what the banks on the way take from the payment before it arrives
 * (receipt `beneficiary_deductions`).
 */
export const SWIFT_SENDING_FEE_MINOR = 1_500n;
export const SWIFT_CORRESPONDENT_FEES_MINOR = 2_500n;
export type SwiftCharges = 'sha' | 'our' | 'ben';

export function swiftChargesSplit(charges: SwiftCharges): { senderFeeMinor: bigint; beneficiaryDeductionsMinor: bigint } {
  const all = SWIFT_SENDING_FEE_MINOR + SWIFT_CORRESPONDENT_FEES_MINOR;
  if (charges === 'our') return { senderFeeMinor: all, beneficiaryDeductionsMinor: 0n };
  if (charges === 'ben') return { senderFeeMinor: 0n, beneficiaryDeductionsMinor: all };
  return { senderFeeMinor: SWIFT_SENDING_FEE_MINOR, beneficiaryDeductionsMinor: SWIFT_CORRESPONDENT_FEES_MINOR };
}

/**
 * The receipt of spec 2.5. initial, developer fee, exchange fee and subtotal are in the source
 * currency; gas fee and final amount in the destination asset. The exchange fee is rounded up and
 * conversions down, so rounding never costs the platform; see docs/TRANSFERS.md.
 */
export function quoteReceipt(q: {
  amountMinor: bigint; developerFeeMinor: bigint; from: string; to: string; rate: string; gasFeeMinor: bigint; swiftFeeMinor?: bigint;
}): Receipt {
  const swiftFeeMinor = q.swiftFeeMinor ?? 0n;
  const bps = exchangeFeeBps(q.from, q.to);
  const afterDeveloperFee = q.amountMinor - q.developerFeeMinor;
  const exchangeFeeMinor = (afterDeveloperFee * bps + 9_999n) / 10_000n;
  const subtotalMinor = afterDeveloperFee - exchangeFeeMinor;
  const converted = convertMinor(subtotalMinor, ASSET_SCALE[q.from], ASSET_SCALE[q.to], q.rate);
  const finalMinor = converted - q.gasFeeMinor - swiftFeeMinor;
  if (finalMinor <= 0n) throw new QuoteError('After fees nothing would arrive: the amount is too small');
  return { initialMinor: q.amountMinor, developerFeeMinor: q.developerFeeMinor, exchangeFeeMinor, subtotalMinor, exchangeRate: q.rate, gasFeeMinor: q.gasFeeMinor, swiftFeeMinor, finalMinor };
}
