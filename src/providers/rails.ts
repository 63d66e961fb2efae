import { sql } from 'kysely';
import type { Tenant } from '../api/context';
import type { Db } from '../db';
import { newId } from '../ids';
import { RAILS, realSettlementTime, type FiatRail, type FiatRailProfile } from '../domain/rails';

export interface RailPaymentRequest {
  tenant: Tenant;
  /** Derived from the business operation and its step: the same key never pays twice. */
  idempotencyKey: string;
  rail: FiatRail;
  /** credit: we pay out to the account; debit: we pull from it. */
  direction: 'credit' | 'debit';
  amountMinor: bigint;
  currency: string;
  /** The receiving account (payouts); refunds of a deposit go back to the sender named by `reference`. */
  externalAccountId?: string;
  /** Our reference on the payment (the transfer id); banks show it to the receiver. */
  reference?: string;
  purpose: 'micro_deposit' | 'micro_deposit_recovery' | 'payout' | 'refund';
}

export type RailPaymentStatus = 'pending' | 'settled' | 'rejected' | 'returned';

export interface RailPayment {
  id: string;
  status: RailPaymentStatus;
  amountMinor: bigint;
  direction: 'credit' | 'debit';
  settlesAt: Date;
  /** R01…, AC04…: why the receiving bank rejected or returned it. */
  code?: string;
  /** Sandbox only: when a return the sandbox already decided on will arrive. */
  returnsAt?: Date;
}

/**
 * What a real fiat-rail provider implements (its API wrapped): submit a payment once per key, tell
 * its status, and take a return. Inbound deposits arrive from the provider (a webhook in production,
 * the sandbox routes here) and are matched to transfers by their deposit reference.
 */
export interface RailAdapter {
  submitPayment(request: RailPaymentRequest): Promise<RailPayment>;
  getPayment(id: string): Promise<RailPayment>;
}

/**
 * Sandbox magic values, read from the cents of the amount (docs/TRANSFERS.md):
 * .13 → the receiving bank rejects the payout (undeliverable); .14 → it settles, then comes back
 * inside the return window; .16 → a refund on this rail fails its first attempts; .17 → the source
 * bank rejects the transfer's first refund (a retried one goes through); .18 → the transfer's first
 * refund settles, then the source bank returns it inside the return window.
 */
export function sandboxOutcome(
  amountMinor: bigint, scale: number, purpose: RailPaymentRequest['purpose'], opts: { firstRefund?: boolean } = {},
): 'settle' | 'reject' | 'return' {
  if (purpose === 'refund') {
    if (opts.firstRefund && isMagicCents(amountMinor, scale, 17n)) return 'reject';
    if (opts.firstRefund && isMagicCents(amountMinor, scale, 18n)) return 'return';
    return 'settle';
  }
  if (purpose !== 'payout') return 'settle';
  if (isMagicCents(amountMinor, scale, 13n)) return 'reject';
  if (isMagicCents(amountMinor, scale, 14n)) return 'return';
  return 'settle';
}

export function isMagicCents(amountMinor: bigint, scale: number, cents: bigint): boolean {
  return scale >= 2 && (amountMinor / 10n ** BigInt(scale - 2)) % 100n === cents;
}

export const SANDBOX_REFUND_FAILURES = 3;

/** The provider did not take the call (outage, refusal): worth retrying. */
export class RailUnavailableError extends Error {}

/**
 * The sandbox simulators of every fiat rail: payments live in PostgreSQL and follow the rail's
 * settlement times and cut-offs (domain/rails.ts), on the sandbox clock: a delay on the real clock is
 * divided by SANDBOX_TIME_SCALE. The same idempotency key returns the first payment.
 */
export class SandboxRails implements RailAdapter {
  constructor(private readonly db: Db, private readonly timeScale: number, private readonly scaleOf: (currency: string) => number) {}

  /** A real delay on the sandbox clock. */
  scaled(ms: number): number {
    return Math.max(1, Math.round(ms / this.timeScale));
  }

  /** Refunds that the sandbox makes fail a few times (magic value .16), by idempotency key. */
  private readonly refundFailures = new Map<string, number>();

  async submitPayment(r: RailPaymentRequest): Promise<RailPayment> {
    const now = new Date();
    if (r.purpose === 'refund' && isMagicCents(r.amountMinor, this.scaleOf(r.currency), 16n)) {
      const failures = this.refundFailures.get(r.idempotencyKey) ?? 0;
      if (failures < SANDBOX_REFUND_FAILURES) {
        this.refundFailures.set(r.idempotencyKey, failures + 1);
        throw new RailUnavailableError(`${r.rail}: the sending bank did not accept the refund (sandbox failure ${failures + 1} of ${SANDBOX_REFUND_FAILURES})`);
      }
    }
    const profile = RAILS[r.rail] as FiatRailProfile;
    const settlesAt = new Date(now.getTime() + this.scaled(realSettlementTime(profile, now).getTime() - now.getTime()));
    const earlierRefund = r.purpose === 'refund' && r.reference
      ? await this.db.selectFrom('rail_payments').select('id').where('reference', '=', r.reference).where('purpose', '=', 'refund')
        .where('idempotency_key', '<>', r.idempotencyKey).executeTakeFirst()
      : undefined;
    const outcome = sandboxOutcome(r.amountMinor, this.scaleOf(r.currency), r.purpose, { firstRefund: !earlierRefund });
    const code = outcome === 'reject' ? profile.rejectCode : outcome === 'return' ? profile.returnCode : null;
    await sql`
      insert into rail_payments (id, developer_id, environment, rail, direction, amount_minor, currency, external_account_id,
                                 purpose, idempotency_key, reference, outcome, outcome_code, submitted_at, settles_at, created_at)
      values (${newId('payment', now.getTime())}, ${r.tenant.developerId}, ${r.tenant.environment}, ${r.rail}, ${r.direction},
              ${r.amountMinor.toString()}, ${r.currency}, ${r.externalAccountId ?? null}, ${r.purpose}, ${r.idempotencyKey},
              ${r.reference ?? null}, ${outcome}, ${code}, ${now}, ${settlesAt}, ${now})
      on conflict (idempotency_key) do nothing`.execute(this.db);
    const row = await this.db.selectFrom('rail_payments').selectAll().where('idempotency_key', '=', r.idempotencyKey).executeTakeFirstOrThrow();
    return this.toPayment(row);
  }

  async getPayment(id: string): Promise<RailPayment> {
    return this.toPayment(await this.db.selectFrom('rail_payments').selectAll().where('id', '=', id).executeTakeFirstOrThrow());
  }

  /** Sandbox: a payment into the platform's collection account arrives, naming a deposit reference. */
  async receiveInbound(r: { tenant: Tenant; rail: FiatRail; amountMinor: bigint; currency: string; reference: string }): Promise<{ id: string }> {
    const now = new Date();
    const id = newId('payment', now.getTime());
    await this.db.insertInto('rail_payments').values({
      id, developer_id: r.tenant.developerId, environment: r.tenant.environment, rail: r.rail, direction: 'debit', amount_minor: Number(r.amountMinor),
      currency: r.currency, external_account_id: null, purpose: 'inbound_deposit', idempotency_key: `inbound:${id}`, reference: r.reference,
      outcome_code: null, returned_at: null, submitted_at: now, settles_at: now, created_at: now,
    }).execute();
    return { id };
  }

  /** The receiving bank sends a settled payment back (the sandbox route; a provider webhook in production). */
  async returnPayment(id: string, code: string): Promise<RailPayment> {
    await this.db.updateTable('rail_payments').set({ outcome: 'return', outcome_code: code, returned_at: new Date() })
      .where('id', '=', id).where('returned_at', 'is', null).execute();
    return this.getPayment(id);
  }

  private toPayment(row: {
    id: string; rail: string; amount_minor: number | string; direction: 'credit' | 'debit'; settles_at: Date;
    outcome: 'settle' | 'reject' | 'return'; outcome_code: string | null; returned_at: Date | null;
  }): RailPayment {
    const now = Date.now();
    const settled = row.settles_at.getTime() <= now;
    const profile = RAILS[row.rail as FiatRail] as FiatRailProfile;
    // A sandbox-decided return arrives halfway through the return window.
    const returnsAt = row.returned_at ?? (row.outcome === 'return' ? new Date(row.settles_at.getTime() + this.scaled(profile.returnWindowMs / 2)) : undefined);
    let status: RailPaymentStatus = settled ? 'settled' : 'pending';
    if (settled && row.outcome === 'reject') status = 'rejected';
    if (settled && returnsAt && returnsAt.getTime() <= now) status = 'returned';
    return {
      id: row.id,
      status,
      amountMinor: BigInt(row.amount_minor),
      direction: row.direction,
      settlesAt: row.settles_at,
      code: row.outcome === 'settle' ? undefined : (row.outcome_code ?? undefined),
      returnsAt,
    };
  }
}
