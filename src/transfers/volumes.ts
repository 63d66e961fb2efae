import { sql, type Expression, type ExpressionBuilder } from 'kysely';
import type { Database, TransferRow } from '../db/schema';

// The 24-hour limits (a customer's velocity, a payment route's per-day limit) read running totals of
// live transfers per owner, source currency and UTC hour of creation, which database triggers keep
// (migration 0033): at most 25 rows, however many transfers the day had.

/** The states in which a transfer does not count toward its 24-hour limits (as migration 0033's triggers count). */
const UNCOUNTED_STATES: readonly string[] = ['awaiting_funds', 'canceled', 'refunded'];

/**
 * The totals per currency of `owner`'s live transfers created in the UTC hour of `createdAt` and the
 * 24 hours before it (a window of 24 to 25 hours, which also counts the hour's later transfers).
 */
export function volumesOfDay<DB extends Database, TB extends keyof DB>(
  eb: ExpressionBuilder<DB, TB>, owner: { type: 'customer' | 'route'; id: Expression<string | null> | string }, createdAt: Expression<Date> | Date,
) {
  return (eb as unknown as ExpressionBuilder<Database, never>).selectFrom('transfer_volumes as v')
    .select(['v.currency', sql<string>`sum(v.amount_minor)::text`.as('total')])
    .where('v.owner_type', '=', owner.type).where('v.owner_id', '=', owner.id as string)
    .where('v.hour', '>=', sql<Date>`date_trunc('hour', ${createdAt}::timestamptz - interval '24 hours', 'UTC')`)
    .where('v.hour', '<=', sql<Date>`date_trunc('hour', ${createdAt}::timestamptz, 'UTC')`)
    .groupBy('v.currency');
}

/** The totals with the transfer's own amount, which they do not hold while it is not yet counted (reviewed before its deposit is recorded). */
export function withOwnAmount(totals: { currency: string; total: string }[], t: Pick<TransferRow, 'state' | 'source_currency' | 'amount_minor'>) {
  if (!UNCOUNTED_STATES.includes(t.state)) return totals;
  const own = totals.find((r) => r.currency === t.source_currency);
  if (!own) return [...totals, { currency: t.source_currency, total: String(t.amount_minor) }];
  return totals.map((r) => (r === own ? { ...r, total: (BigInt(r.total) + BigInt(t.amount_minor)).toString() } : r));
}
