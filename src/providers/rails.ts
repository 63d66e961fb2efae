import { sql } from 'kysely';
import type { Tenant } from '../api/context';
import type { Db } from '../db';
import { newId } from '../ids';

export interface RailPaymentRequest {
  tenant: Tenant;
  /** Derived from the business operation and its step: the same key never pays twice. */
  idempotencyKey: string;
  direction: 'credit' | 'debit';
  amountMinor: number;
  currency: 'usd';
  externalAccountId: string;
  purpose: 'micro_deposit' | 'micro_deposit_recovery' | 'payout' | 'refund';
}

export interface RailPayment {
  id: string;
  status: 'pending' | 'settled';
  amountMinor: number;
  direction: 'credit' | 'debit';
  settlesAt: Date;
}

/** What a real ACH provider implements: submit a payment once per key, and tell its status. */
export interface RailAdapter {
  submitPayment(request: RailPaymentRequest): Promise<RailPayment>;
  getPayment(id: string): Promise<RailPayment>;
}

/** ACH settles the next business day; the sandbox clock (SANDBOX_TIME_SCALE) can speed that up. */
export const ACH_SETTLEMENT_MS = 24 * 3600_000;

/**
 * The sandbox ACH rail. Payments live in PostgreSQL; a payment is settled once the sandbox clock
 * passes its settlement time. Submitting the same idempotency key again returns the first payment.
 */
export class SandboxAchRail implements RailAdapter {
  constructor(private readonly db: Db, private readonly timeScale: number) {}

  async submitPayment(r: RailPaymentRequest): Promise<RailPayment> {
    const now = new Date();
    const settlesAt = new Date(now.getTime() + ACH_SETTLEMENT_MS / this.timeScale);
    await sql`
      insert into rail_payments (id, developer_id, environment, rail, direction, amount_minor, currency, external_account_id,
                                 purpose, idempotency_key, submitted_at, settles_at, created_at)
      values (${newId('payment', now.getTime())}, ${r.tenant.developerId}, ${r.tenant.environment}, 'ach', ${r.direction},
              ${r.amountMinor}, ${r.currency}, ${r.externalAccountId}, ${r.purpose}, ${r.idempotencyKey}, ${now}, ${settlesAt}, ${now})
      on conflict (idempotency_key) do nothing`.execute(this.db);
    const row = await this.db.selectFrom('rail_payments').selectAll().where('idempotency_key', '=', r.idempotencyKey).executeTakeFirstOrThrow();
    return toPayment(row);
  }

  async getPayment(id: string): Promise<RailPayment> {
    return toPayment(await this.db.selectFrom('rail_payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
  }
}

function toPayment(row: { id: string; amount_minor: number; direction: 'credit' | 'debit'; settles_at: Date }): RailPayment {
  return {
    id: row.id,
    status: row.settles_at.getTime() <= Date.now() ? 'settled' : 'pending',
    amountMinor: Number(row.amount_minor),
    direction: row.direction,
    settlesAt: row.settles_at,
  };
}
