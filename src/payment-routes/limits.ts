import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { z } from 'zod';
import type { Db } from '../db';
import type { PaymentRouteRow, TransferRow } from '../db/schema';
import { ASSET_SCALE, CANONICAL_DECIMAL, formatAmount, parseAmount } from '../domain/money';
import { railBoundsMinor, type PaymentRail } from '../domain/rails';
import { invalidField } from '../errors';
import { volumesOfDay, withOwnAmount } from '../transfers/volumes';

// A route's own limits, in its source currency: per deposit, and per 24 hours of its deposits. A
// deposit over one is not refused (the money has arrived): its transfer is held in review for an
// operator's decision, as the customer's own limits hold it (src/transfers/review.ts).

const limitAmount = z.string().regex(CANONICAL_DECIMAL, 'must be a decimal string such as "500.00"').nullable().optional();

export const RouteLimits = z.strictObject({
  per_deposit: limitAmount.describe('Deposits above it are held in review'),
  per_day: limitAmount.describe("Deposits that take the route's last 24 hours above it are held in review"),
}).describe('Limits in the source currency; null removes one');

export const RouteLimitsSchema = z.object({ per_deposit: z.string().nullable(), per_day: z.string().nullable() });

type LimitColumns = Pick<PaymentRouteRow, 'limit_per_deposit_minor' | 'limit_per_day_minor'>;

/** A day's limit in whole units of the currency: far above any route's day, far inside its column. */
const MAX_DAY_LIMIT_UNITS = 1_000_000_000_000n;

/**
 * The limits as stored: a change keeps what it does not name. A deposit's limit is at most what the
 * source rail carries in one payment; a day's at most a trillion units of the currency (400 naming the field).
 */
export function limitColumns(currency: string, rail: PaymentRail, limits: z.output<typeof RouteLimits> | undefined, before?: LimitColumns): LimitColumns {
  const scale = ASSET_SCALE[currency] ?? 2;
  const most = { per_deposit: railBoundsMinor(rail, currency).max, per_day: MAX_DAY_LIMIT_UNITS * 10n ** BigInt(scale) };
  const minor = (key: 'per_deposit' | 'per_day', stored: string | null) => {
    const value = limits?.[key];
    if (value === undefined) return stored;
    if (value === null) return null;
    const parsed = parseAmount(value, scale);
    if (parsed === null || parsed === 0n) throw invalidField('body', `limits.${key}`, `must be a positive amount with at most ${scale} decimals for ${currency}`);
    if (parsed > most[key]) throw invalidField('body', `limits.${key}`, `must be at most ${formatAmount(most[key], scale)} ${currency}${key === 'per_deposit' ? ` (what ${rail} carries in one payment)` : ''}`);
    return parsed.toString();
  };
  return {
    limit_per_deposit_minor: minor('per_deposit', before?.limit_per_deposit_minor ?? null),
    limit_per_day_minor: minor('per_day', before?.limit_per_day_minor ?? null),
  };
}

export function serializeLimits(row: LimitColumns & Pick<PaymentRouteRow, 'source_currency'>) {
  const scale = ASSET_SCALE[row.source_currency] ?? 2;
  const shown = (v: string | null) => (v === null ? null : formatAmount(BigInt(v), scale));
  return { per_deposit: shown(row.limit_per_deposit_minor), per_day: shown(row.limit_per_day_minor) };
}

/**
 * Why a route's transfer is held: its deposit over the route's limit, or the route's live transfers
 * of this one's UTC hour and the 24 before it (this one included) over theirs (running totals, read
 * only when the route has a per-day limit).
 */
export async function routeLimitReasons(
  db: Db, t: Pick<TransferRow, 'id' | 'route_id' | 'amount_minor' | 'created_at' | 'source_currency' | 'state'>,
): Promise<string[]> {
  if (!t.route_id) return [];
  const route = await db.selectFrom('payment_routes as p').where('p.id', '=', t.route_id)
    .select(['p.limit_per_deposit_minor', 'p.limit_per_day_minor', 'p.source_currency'])
    .select((eb) => eb.case().when('p.limit_per_day_minor', 'is not', null)
      .then(jsonArrayFrom(volumesOfDay(eb, { type: 'route', id: eb.ref('p.id') }, t.created_at))).end().as('day_totals'))
    .executeTakeFirst();
  if (!route) return [];
  const limits = serializeLimits(route);
  const reasons: string[] = [];
  if (route.limit_per_deposit_minor !== null && BigInt(t.amount_minor) > BigInt(route.limit_per_deposit_minor)) {
    reasons.push(`route_limit: the deposit is above the route's limit of ${limits.per_deposit} ${t.source_currency} per deposit`);
  }
  const dayTotal = withOwnAmount(route.day_totals ?? [], t).find((r) => r.currency === t.source_currency)?.total ?? '0';
  if (route.limit_per_day_minor !== null && BigInt(dayTotal) > BigInt(route.limit_per_day_minor)) {
    reasons.push(`route_limit: the route's deposits of 24 hours are above its limit of ${limits.per_day} ${t.source_currency} per day`);
  }
  return reasons;
}
