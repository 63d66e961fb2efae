import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import { z } from 'zod';
import type { Tenant } from '../db/tenant-scope';
import type { Db } from '../db';
import type { RailPaymentsTable } from '../db/schema';
import { newId } from '../ids';
import { ASSET_SCALE, parseAmount } from '../domain/money';
import { findTextRuleBreach } from '../domain/validation';
import { FIAT_RAILS, RAILS, realSettlementTime, type FiatRail, type FiatRailProfile } from '../domain/rails';

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
  /**
   * Our reference on the payment (the transfer id); banks show it to the receiver. A deposit return
   * names the provider's id of the inbound payment it sends back: the provider returns it to that
   * payment's originator, whose account details the platform never sees.
   */
  reference?: string;
  purpose: 'micro_deposit' | 'micro_deposit_recovery' | 'payout' | 'refund' | 'deposit_return';
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
  /**
   * The provider's webhook, checked (its signature scheme; RailWebhookRejected when it is not the
   * provider's) and translated into rail events.
   */
  parseWebhook(request: { headers: Record<string, string | string[] | undefined>; rawBody: Buffer }): RailEvent[];
}

/**
 * What only the sandbox does on its simulated rails, on a developer's request: money arrives in the
 * platform's collection account, and a bank sends a settled payment back. A real provider does these
 * itself and tells the platform through its webhook.
 */
export interface SandboxRailControls {
  /** A payment into the platform's collection account arrives, naming a deposit reference. */
  receiveInbound(r: { tenant: Tenant; rail: FiatRail; amountMinor: bigint; currency: string; reference: string }): Promise<{ id: string }>;
  /** The receiving bank sends a settled payment back. */
  returnPayment(id: string, code: string): Promise<RailPayment>;
}

/** What a provider tells the platform, whatever its own format. */
export type RailEvent =
  /**
   * Money arrived in the platform's collection account, naming a deposit reference; `senderName`: the
   * originating account holder, where the rail carries it (screened before money goes back to them).
   */
  | { id: string; type: 'payment.received'; providerPaymentId: string; rail: FiatRail; currency: string; amountMinor: bigint; reference: string; senderName?: string }
  /** A payment the platform sent (a payout or a refund) came back from the receiving bank. */
  | { id: string; type: 'payment.returned'; providerPaymentId: string; code: string };

/** A webhook that is not the provider's (no or a wrong signature, too old) or not understood. */
export class RailWebhookRejected extends Error {
  constructor(message: string, readonly reason: 'signature' | 'payload') {
    super(message);
  }
}

/** A replayed webhook older than this is refused. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

const SandboxWebhook = z.discriminatedUnion('type', [
  z.strictObject({
    id: z.string().min(1).max(255),
    type: z.literal('payment.received'),
    data: z.strictObject({
      payment_id: z.string().min(1).max(255),
      rail: z.enum(FIAT_RAILS),
      currency: z.string().toLowerCase(),
      amount: z.string(),
      reference: z.string().min(1).max(255),
      sender_name: z.string().trim().min(1).max(255).optional(),
    }),
  }),
  z.strictObject({
    id: z.string().min(1).max(255),
    type: z.literal('payment.returned'),
    data: z.strictObject({ payment_id: z.string().min(1).max(255), code: z.string().min(1).max(16) }),
  }),
]);

/**
 * The sandbox provider's webhook signature, Stripe's scheme: `Rail-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<raw body>" under RAIL_WEBHOOK_SECRET>`.
 */
export function signSandboxWebhook(secret: string, rawBody: string, at = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${rawBody}`).digest('hex')}`;
}

/**
 * Sandbox magic values, read from the cents of the amount (docs/TRANSFERS.md):
 * .13 → the receiving bank rejects the payout (undeliverable); .14 → it settles, then comes back
 * inside the return window; .16 → a refund on this rail fails its first attempts; .17 → the source
 * bank rejects the transfer's first refund (a retried one goes through); .18 → the transfer's first
 * refund settles, then the source bank returns it inside the return window; .19 → the sender's bank
 * rejects the first return of a deposit the platform could not use (an operator's release goes through).
 */
export function sandboxOutcome(
  amountMinor: bigint, scale: number, purpose: RailPaymentRequest['purpose'], opts: { firstAttempt?: boolean } = {},
): 'settle' | 'reject' | 'return' {
  if (purpose === 'deposit_return') return opts.firstAttempt && isMagicCents(amountMinor, scale, 19n) ? 'reject' : 'settle';
  if (purpose === 'refund') {
    if (opts.firstAttempt && isMagicCents(amountMinor, scale, 17n)) return 'reject';
    if (opts.firstAttempt && isMagicCents(amountMinor, scale, 18n)) return 'return';
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
export class SandboxRails implements RailAdapter, SandboxRailControls {
  constructor(
    private readonly db: Db, private readonly timeScale: number, private readonly scaleOf: (currency: string) => number,
    private readonly webhookSecret?: string,
  ) {}

  parseWebhook(request: { headers: Record<string, string | string[] | undefined>; rawBody: Buffer }): RailEvent[] {
    if (!this.webhookSecret) throw new RailWebhookRejected('The rail webhook is off (RAIL_WEBHOOK_SECRET is unset)', 'signature');
    const header = request.headers['rail-signature'];
    const parts = new Map(String(Array.isArray(header) ? header[0] : header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
    const at = Number(parts.get('t'));
    const given = Buffer.from(parts.get('v1') ?? '', 'hex');
    const expected = createHmac('sha256', this.webhookSecret).update(`${parts.get('t')}.`).update(request.rawBody).digest();
    if (!Number.isInteger(at) || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new RailWebhookRejected('Rail-Signature does not match the body', 'signature');
    }
    if (Math.abs(Date.now() / 1000 - at) > WEBHOOK_TOLERANCE_SECONDS) {
      throw new RailWebhookRejected(`Rail-Signature is more than ${WEBHOOK_TOLERANCE_SECONDS} s old`, 'signature');
    }
    let body: unknown;
    try {
      body = JSON.parse(request.rawBody.toString('utf8'));
    } catch {
      throw new RailWebhookRejected('The body is not JSON', 'payload');
    }
    const breach = findTextRuleBreach(body);
    if (breach) throw new RailWebhookRejected(`Not a rail event: ${breach.key} ${breach.reason}`, 'payload');
    const parsed = SandboxWebhook.safeParse(body);
    if (!parsed.success) throw new RailWebhookRejected(`Not a rail event: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`, 'payload');
    const event = parsed.data;
    if (event.type === 'payment.returned') return [{ id: event.id, type: event.type, providerPaymentId: event.data.payment_id, code: event.data.code }];
    const { currency, amount } = event.data;
    const amountMinor = currency in ASSET_SCALE ? parseAmount(amount, ASSET_SCALE[currency]!) : null;
    if (amountMinor === null) throw new RailWebhookRejected(`data.amount ${amount} is not an amount of ${currency}`, 'payload');
    return [{
      id: event.id, type: event.type, providerPaymentId: event.data.payment_id, rail: event.data.rail, currency, amountMinor, reference: event.data.reference,
      ...(event.data.sender_name ? { senderName: event.data.sender_name } : {}),
    }];
  }

  /** A real delay on the sandbox clock. */
  scaled(ms: number): number {
    return Math.max(1, Math.round(ms / this.timeScale));
  }

  /** Refunds that the sandbox makes fail a few times (magic value .16), by idempotency key. */
  private readonly refundFailures = new Map<string, number>();

  async submitPayment(r: RailPaymentRequest): Promise<RailPayment> {
    // Defence in depth behind the API's 503: a simulator never carries a live payment.
    if (r.tenant.environment !== 'sandbox') throw new RailUnavailableError(`${r.rail}: no live provider is configured, and the sandbox simulator never carries live payments`);
    const now = new Date();
    if (r.purpose === 'refund' && isMagicCents(r.amountMinor, this.scaleOf(r.currency), 16n)) {
      const failures = this.refundFailures.get(r.idempotencyKey) ?? 0;
      if (failures < SANDBOX_REFUND_FAILURES) {
        this.refundFailures.set(r.idempotencyKey, failures + 1);
        throw new RailUnavailableError(`${r.rail}: the sending bank did not accept the refund (sandbox failure ${failures + 1} of ${SANDBOX_REFUND_FAILURES})`);
      }
    }
    const profile = RAILS[r.rail] as FiatRailProfile;
    // Unlike other delays, no 1 ms floor: a fast sandbox clock settles instant rails at once.
    const settlesAt = new Date(now.getTime() + Math.round((realSettlementTime(profile, now).getTime() - now.getTime()) / this.timeScale));
    // The first refund of a transfer, or the first return of a deposit, is the one a magic value affects.
    const earlierAttempt = (r.purpose === 'refund' || r.purpose === 'deposit_return') && r.reference
      ? await this.db.selectFrom('rail_payments').select('id').where('reference', '=', r.reference).where('purpose', '=', r.purpose)
        .where('idempotency_key', '<>', r.idempotencyKey).executeTakeFirst()
      : undefined;
    const outcome = sandboxOutcome(r.amountMinor, this.scaleOf(r.currency), r.purpose, { firstAttempt: !earlierAttempt });
    const code = outcome === 'reject' ? profile.rejectCode : outcome === 'return' ? profile.returnCode : null;
    const inserted = await sql<Selectable<RailPaymentsTable>>`
      insert into rail_payments (id, developer_id, environment, rail, direction, amount_minor, currency, external_account_id,
                                 purpose, idempotency_key, reference, outcome, outcome_code, submitted_at, settles_at, created_at)
      values (${newId('payment', now.getTime())}, ${r.tenant.developerId}, ${r.tenant.environment}, ${r.rail}, ${r.direction},
              ${r.amountMinor.toString()}, ${r.currency}, ${r.externalAccountId ?? null}, ${r.purpose}, ${r.idempotencyKey},
              ${r.reference ?? null}, ${outcome}, ${code}, ${now}, ${settlesAt}, ${now})
      on conflict (idempotency_key) do nothing
      returning *`.execute(this.db);
    // Sent before (the same idempotency key): the first payment.
    const row = inserted.rows[0] ?? await this.db.selectFrom('rail_payments').selectAll().where('idempotency_key', '=', r.idempotencyKey).executeTakeFirstOrThrow();
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
