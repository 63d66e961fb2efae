/** Decimal places of each asset (API conventions). Amounts travel as decimal strings, live as integers. */
export const ASSET_SCALE: Record<string, number> = {
  usd: 2, eur: 2, gbp: 2, brl: 2, mxn: 2, usdc: 6, usdt: 6, dai: 18, pyusd: 6, eth: 18, btc: 8, sol: 9, matic: 18, fpn: 18, xlm: 7, trx: 6,
};

/** A decimal as the API writes one: no sign, no leading zeros ("0.50", "10", never "010.00"), digits after a dot. */
export const CANONICAL_DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/** "10.50" → 1050n for a scale of 2. Null when the string is not a positive amount of that precision. */
export function parseAmount(value: string, scale: number): bigint | null {
  const m = CANONICAL_DECIMAL.exec(value);
  if (!m || (m[2] !== undefined && m[2].length > scale)) return null;
  const minor = BigInt(m[1]) * 10n ** BigInt(scale) + BigInt((m[2] ?? '').padEnd(scale, '0') || '0');
  return minor > 0n ? minor : null;
}

/** As parseAmount, but zero is an amount too ("0", "0.00"): a balance, a tolerance. */
export function parseAmountOrZero(value: string, scale: number): bigint | null {
  return new RegExp(`^0+(\\.0{1,${scale}})?$`).test(value) ? 0n : parseAmount(value, scale);
}

/** 1050n → "10.50" for a scale of 2. */
export function formatAmount(minor: bigint | number, scale: number): string {
  const v = BigInt(minor);
  const negative = v < 0n;
  const abs = negative ? -v : v;
  const unit = 10n ** BigInt(scale);
  const whole = abs / unit;
  const frac = (abs % unit).toString().padStart(scale, '0');
  return `${negative ? '-' : ''}${whole}${scale > 0 ? `.${frac}` : ''}`;
}
