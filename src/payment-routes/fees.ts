import { z } from 'zod';

// A route's developer fee is a percent of each deposit, with up to four decimals, kept as
// `developer_fee` on the deposit's transfer (rounded down to the currency's smallest unit).

export const DeveloperFeePercent = z.string().trim()
  .regex(/^(0|[1-9]\d?)(\.\d{1,4})?$/, 'must be a decimal percent from 0 to below 100, such as "1.5"')
  .describe('Decimal percent of each deposit kept as developer_fee');

/** The percent in ten-thousandths of a percent: "1.5" → 15000n. */
function percentMillionths(percent: string): bigint {
  const [whole, fraction = ''] = percent.split('.');
  return BigInt(whole!) * 10_000n + BigInt((fraction + '0000').slice(0, 4));
}

/** The fee on a deposit, in its minor units, rounded down. */
export function developerFeeMinor(amountMinor: bigint, percent: string): bigint {
  return (amountMinor * percentMillionths(percent)) / 1_000_000n;
}

/** The stored percent as shown: no trailing zeros ("1.5000" → "1.5", "0.0000" → "0"). */
export function percentString(stored: string): string {
  return stored.includes('.') ? stored.replace(/0+$/, '').replace(/\.$/, '') : stored;
}
