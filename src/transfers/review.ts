import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment, ExternalAccountRow, TransferRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { ASSET_SCALE } from '../domain/money';
import { convertMinor, type RateProvider } from '../domain/quote';
import { isMagicCents } from '../providers/rails';
import type { ChainAdapters } from '../chains';
import { RAILS, isChainRail, type FiatRailProfile, type PaymentRail } from '../domain/rails';
import type { SanctionsScreener } from '../sanctions/screener';
import { storeScreening } from '../sanctions/screenings';
import { routeLimitReasons } from '../payment-routes/limits';
import { volumesOfDay, withOwnAmount } from './volumes';

export interface TransferReviewLimits {
  /** In US dollars. */
  reviewThresholdUsd: number;
  dailyLimitUsd: number;
}

type ReviewDeps = { db: Db; cipher: DataCipher; sanctions: SanctionsScreener; rates: Record<Environment, RateProvider>; limits: TransferReviewLimits; chains: ChainAdapters };

/** Why the payee cannot be paid, found before anything is sent: the transfer is undeliverable and refunded (no return leg). */
export interface PayeeRefusal {
  reason: string;
  code?: string;
}

/**
 * The in_review checks (docs/TRANSFERS.md). First whether the payee can be paid at all (else the
 * transfer is undeliverable before anything is sent). Then the reasons that hold it for an operator's
 * decision: the customer suspended, sanctions screening of the destination account holder and of
 * the fiat deposit's sender (where the provider named them), listed digital-currency addresses on
 * either side, the amount threshold and the customer's 24-hour velocity; a route's own limits.
 */
export async function reviewTransfer(deps: ReviewDeps, transferId: string): Promise<{ reasons: string[]; undeliverable?: PayeeRefusal }> {
  return reviewRead(deps, await transferForReview(deps.db, transferId));
}

/** The review of a transfer and its facts as transferForReview read them. */
export async function reviewRead(deps: ReviewDeps, { transfer: t, facts }: TransferForReview): Promise<{ reasons: string[]; undeliverable?: PayeeRefusal }> {
  const undeliverable = await payeeRefusal(deps, t, facts.account);
  if (undeliverable) return { reasons: [], undeliverable };
  const reasons = [
    ...suspensionReasons(facts), ...await sanctionsReasons(deps, t, facts), ...await limitReasons(deps, t, facts.recent), ...await routeLimitReasons(deps.db, t),
  ];
  if (t.environment === 'sandbox' && isMagicCents(BigInt(t.amount_minor), ASSET_SCALE[t.source_currency], 15n)) {
    reasons.push('sandbox_review: amounts ending in .15 are held in the sandbox');
  }
  return { reasons };
}

type PayeeAccount = Pick<ExternalAccountRow, 'id' | 'status' | 'account_name'>;

/**
 * The transfer and what the checks read of it, in one query: the destination account, the
 * customer's status, the fiat deposit's sender (encrypted on the rail event that named them, where
 * the provider did), and the customer's live transfers (funded, not canceled or refunded) of this
 * one's UTC hour and the 24 before it (itself included), summed per currency (volumes.ts).
 * `depositPaymentId`: the deposit's payment at the provider, for a review before the deposit is
 * recorded (else the sender is found through the recorded deposit).
 */
export async function transferForReview(db: Db, transferId: string, depositPaymentId?: string) {
  const row = await db.selectFrom('transfers as t').innerJoin('customers as c', 'c.id', 't.customer_id').where('t.id', '=', transferId)
    .selectAll('t')
    .select((eb) => [
      'c.status as customer_status', 'c.suspension as customer_suspension',
      jsonObjectFrom(eb.selectFrom('external_accounts as a').select(['a.id', 'a.status', 'a.account_name'])
        .whereRef('a.id', '=', 't.destination_external_account_id')).as('review_account'), // no destination account: no row
      (depositPaymentId
        ? eb.selectFrom('rail_events as e').select('e.sender_encrypted').where('e.provider_payment_id', '=', depositPaymentId)
        : eb.selectFrom('payments as p')
          .innerJoin('rail_events as e', (join) => join.onRef('e.provider_payment_id', '=', 'p.provider_payment_id'))
          .select('e.sender_encrypted')
          .whereRef('p.transfer_id', '=', 't.id').where('p.kind', '=', 'deposit').where('p.status', '=', 'settled'))
        .where('e.type', '=', 'payment.received').where('e.sender_encrypted', 'is not', null)
        .limit(1).as('review_sender_encrypted'),
      jsonArrayFrom(volumesOfDay(eb, { type: 'customer', id: eb.ref('t.customer_id') }, eb.ref('t.created_at'))).as('review_recent'),
    ])
    .executeTakeFirstOrThrow();
  const { customer_status, customer_suspension, review_account, review_sender_encrypted, review_recent, ...transfer } = row;
  const facts = {
    status: customer_status, suspension: customer_suspension, account: (review_account ?? undefined) as PayeeAccount | undefined,
    sender_encrypted: review_sender_encrypted, recent: withOwnAmount(review_recent, transfer as TransferRow),
  };
  return { transfer: transfer as TransferRow, facts };
}
type TransferForReview = Awaited<ReturnType<typeof transferForReview>>;
type ReviewFacts = TransferForReview['facts'];

/**
 * The payee checks before a payout (docs/TRANSFERS.md): the destination account deleted since the
 * transfer was created, a destination address the chain would refuse or lose the tokens at, or — in the sandbox,
 * amounts ending in .12 — the receiving bank reporting the account closed.
 */
async function payeeRefusal(deps: ReviewDeps, t: TransferRow, account: PayeeAccount | undefined): Promise<PayeeRefusal | undefined> {
  if (account?.status === 'deleted') return { reason: `the destination account ${account.id} was deleted after the transfer was created` };
  const refusal = t.destination_to_address && isChainRail(t.destination_rail)
    ? await deps.chains[t.destination_rail].receiverRefusal(t.destination_currency, t.destination_to_address) : undefined;
  if (refusal) return { reason: refusal };
  if (t.environment === 'sandbox' && isMagicCents(BigInt(t.amount_minor), ASSET_SCALE[t.source_currency], 12n)
    && !isChainRail(t.destination_rail) && !t.destination_account_id) {
    const profile = RAILS[t.destination_rail as PaymentRail] as FiatRailProfile;
    return { reason: `the receiving bank reports the destination account closed (sandbox amounts ending in .12)`, code: profile.rejectCode };
  }
  return undefined;
}

/** A customer suspended since the transfer started: its funds wait for an operator, not paid out. */
function suspensionReasons(customer: Pick<ReviewFacts, 'status' | 'suspension'>): string[] {
  return customer.status === 'suspended' ? [`customer_suspended: ${customer.suspension?.reason ?? 'a compliance freeze'}`] : [];
}

async function sanctionsReasons(deps: ReviewDeps, t: TransferRow, { account, sender_encrypted: sender }: ReviewFacts): Promise<string[]> {
  if (!deps.sanctions.readyFor(t.environment)) {
    // Production never pays out unscreened (nor on a stale snapshot); the sandbox may run without lists.
    return t.environment === 'production' ? [`screening_unavailable: ${deps.sanctions.unavailableReason(t.environment)}`] : [];
  }
  const reasons: string[] = [];
  // A name screened as the screening API does; the screening is stored, linked to the customer.
  const screenName = async (name: string, who: string) => {
    const query = { name };
    const outcome = deps.sanctions.screen(query);
    const stored = await storeScreening(deps.db, deps, tenantOf(t), query, outcome, { customerId: t.customer_id });
    if (outcome.status === 'potential_match') {
      const top = outcome.matches[0];
      reasons.push(`sanctions_potential_match: ${who} resembles ${top.matched_name} (${top.source_name}, score ${top.score}, screening ${stored.id})`);
    }
  };
  if (account?.account_name) await screenName(account.account_name, 'destination account holder');
  // Whoever sent the fiat deposit, where the provider named them.
  if (sender) await screenName(deps.cipher.decryptText(sender), "the deposit's sender");
  for (const [side, address] of [['destination', t.destination_to_address], ['source', t.source_from_address]] as const) {
    const listed = address ? deps.sanctions.listedAddress(address) : undefined;
    if (listed) reasons.push(`sanctioned_address: the ${side} address ${address} is listed for ${listed.name} (${listed.source})`);
  }
  return reasons;
}

async function limitReasons(deps: ReviewDeps, t: TransferRow, recent: ReviewFacts['recent']): Promise<string[]> {
  const usdMinor = async (amountMinor: bigint, currency: string) =>
    convertMinor(amountMinor, ASSET_SCALE[currency], 2, await deps.rates[t.environment].rate(currency, 'usd'));
  const reasons: string[] = [];
  if (await usdMinor(BigInt(t.amount_minor), t.source_currency) >= BigInt(Math.round(deps.limits.reviewThresholdUsd * 100))) {
    reasons.push(`amount_threshold: ${t.amount_minor} minor units of ${t.source_currency} is at least ${deps.limits.reviewThresholdUsd} USD`);
  }
  // The customer's live transfers of the day up to this one (transferForReview).
  let totalUsd = 0n;
  for (const r of recent) totalUsd += await usdMinor(BigInt(r.total), r.currency);
  if (totalUsd > BigInt(Math.round(deps.limits.dailyLimitUsd * 100))) {
    reasons.push(`velocity_limit: the customer's transfers in 24 hours exceed ${deps.limits.dailyLimitUsd} USD`);
  }
  return reasons;
}
