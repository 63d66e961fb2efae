import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, OperatorRelease, PaymentKind, PaymentRow, PaymentStatus } from '../db/schema';
import { tenantRows, findTenantRow, type Tenant } from '../db/tenant-scope';
import { newId } from '../ids';
import { paymentKey, STRAY_DEPOSIT_KEY_PART, STRAY_RETURN_KEY_PART } from './keys';

// The one owner of the `payments` table: every payment a transfer makes (deposit, payout, return,
// refund, a stray deposit and its return) is inserted, read and moved through these operations.

type Queryable = Kysely<Database> | Transaction<Database>;

/** A payment is named by its idempotency key (what it is for) or by its id (what the API shows). */
export type PaymentRef = { key: string } | { id: string };

const byRef = (ref: PaymentRef) => ('key' in ref ? (['idempotency_key', ref.key] as const) : (['id', ref.id] as const));

// ---- reads ---------------------------------------------------------------------------------------

function paymentQuery(q: Queryable, ref: PaymentRef, opts: { forUpdate?: boolean }) {
  const [column, value] = byRef(ref);
  const query = q.selectFrom('payments').selectAll().where(column, '=', value);
  return opts.forUpdate ? query.forUpdate() : query;
}

/** The payment, or undefined when there is none. */
export function findPayment(q: Queryable, ref: PaymentRef, opts: { forUpdate?: boolean } = {}): Promise<PaymentRow | undefined> {
  return paymentQuery(q, ref, opts).executeTakeFirst();
}

/** The payment, which must exist. */
export function requirePayment(q: Queryable, ref: PaymentRef, opts: { forUpdate?: boolean } = {}): Promise<PaymentRow> {
  return paymentQuery(q, ref, opts).executeTakeFirstOrThrow();
}

/** A payment the platform sent through a fiat provider, by the provider's id (its webhooks name it so). */
export function sentPaymentByProviderId(
  q: Queryable, providerPaymentId: string, kinds: PaymentKind[], opts: { forUpdate?: boolean } = {},
): Promise<PaymentRow | undefined> {
  let query = q.selectFrom('payments').selectAll().where('provider_payment_id', '=', providerPaymentId).where('kind', 'in', kinds);
  if (opts.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * Where a payout or refund goes, as its payment row says: recorded with the step that submits it
 * (the transfer's destination or source, or where an operator sent a rejected refund).
 */
export function paymentDestination(q: Queryable, transferId: string, kind: 'payout' | 'refund', attempt?: number) {
  return q.selectFrom('payments').select(['to_address', 'external_account_id'])
    .where('idempotency_key', '=', paymentKey(transferId, kind, attempt)).executeTakeFirstOrThrow();
}

/** The deposits the transfers took (settled), with what identifies them on chain or at the provider. */
export function settledDeposits(q: Queryable, transferIds: string[]) {
  return q.selectFrom('payments').select(['transfer_id', 'tx_hash', 'provider_payment_id'])
    .where('transfer_id', 'in', transferIds).where('kind', '=', 'deposit').where('status', '=', 'settled').execute();
}

/** The transfers whose payments on a chain were these transactions (a wallet's transactions name them). */
export async function transfersOfTransactions(q: Queryable, rail: string, txHashes: string[]): Promise<Map<string, string>> {
  if (txHashes.length === 0) return new Map();
  const rows = await q.selectFrom('payments').select(['transfer_id', 'tx_hash'])
    .where('rail', '=', rail).where('tx_hash', 'in', txHashes).execute();
  return new Map(rows.map((r) => [r.tx_hash!, r.transfer_id]));
}

/** The latest payment of a kind of a transfer (optionally in one status). */
export function latestPayment(q: Queryable, transferId: string, kind: PaymentKind, status?: PaymentStatus) {
  let query = q.selectFrom('payments').selectAll().where('transfer_id', '=', transferId).where('kind', '=', kind);
  if (status) query = query.where('status', '=', status);
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').executeTakeFirst();
}

/** The tenant's payments, for the API's list (filters as the route names them). */
export function tenantPayments(
  q: Queryable, tenant: Tenant, filter: { transferId?: string; kind?: PaymentKind; rail?: string; status?: PaymentStatus },
) {
  let query = tenantRows(q, 'payments', tenant);
  if (filter.transferId) query = query.where('transfer_id', '=', filter.transferId);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (filter.rail) query = query.where('rail', '=', filter.rail);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query;
}

/** One of the tenant's payments, or the API's 404. */
export const findTenantPayment = (q: Queryable, tenant: Tenant, id: string) => findTenantRow(q, 'payments', tenant, id, { what: 'payment' });

/**
 * Stray deposits (`d`) whose return (`r`) is not decided yet or not finished. A token transfer of
 * nothing (address-poisoning spam) has nothing to give back.
 */
export function straysToReturn(q: Queryable) {
  return q.selectFrom('payments as d')
    .leftJoin('payments as r', (join) => join.on('r.idempotency_key', '=', (eb) =>
      eb.fn('replace', [eb.ref('d.idempotency_key'), eb.val(STRAY_DEPOSIT_KEY_PART), eb.val(STRAY_RETURN_KEY_PART)])))
    .where('d.kind', '=', 'deposit').where('d.status', '=', 'failed').where('d.idempotency_key', 'like', `%${STRAY_DEPOSIT_KEY_PART}%`)
    .where('d.amount_minor', '>', '0')
    .where((eb) => eb.or([eb('r.id', 'is', null), eb('r.status', 'in', ['pending', 'submitted'])]));
}

/**
 * Transfers on these chains, no longer waiting for funds, with strays to send back: with the status
 * of the sweep of their own deposit and whether they took one.
 */
export function chainStrayReturnCandidates(q: Queryable, chains: string[]) {
  return straysToReturn(q).innerJoin('transfers as t', 't.id', 'd.transfer_id')
    .leftJoin('chain_sweeps as s', 's.sweep_key', 't.id')
    .leftJoin('payments as own', (join) => join.onRef('own.transfer_id', '=', 't.id').on('own.kind', '=', 'deposit').on('own.status', '=', 'settled'))
    .select(['t.id', 't.source_rail', 's.status as sweep_status', 'own.id as own_deposit'])
    .distinct()
    // Chain strays only: a fiat stray goes back through its own workflow (rail-deposit-return.ts).
    .where('t.state', '<>', 'awaiting_funds').where('t.deposit_index', 'is not', null).where('t.source_rail', 'in', chains)
    .execute();
}

/** Every held stray-deposit return, of every developer, oldest first: what `payments held` shows operators. */
export function heldDepositReturns(q: Queryable) {
  return q.selectFrom('payments')
    .select(['id', 'developer_id', 'environment', 'transfer_id', 'rail', 'currency', 'amount_minor', 'to_address', 'failure_reason', 'updated_at'])
    .where('kind', '=', 'deposit_return').where('status', '=', 'held').orderBy('updated_at').orderBy('id').execute();
}

// ---- writes --------------------------------------------------------------------------------------

/** What a new payment says; everything it does not name starts empty. */
export type NewPayment = Pick<PaymentRow, 'developer_id' | 'environment' | 'transfer_id' | 'kind' | 'rail' | 'currency' | 'status' | 'idempotency_key'>
  & { amount_minor: bigint | string }
  & Partial<Pick<PaymentRow, 'external_account_id' | 'from_address' | 'to_address' | 'provider_payment_id' | 'tx_hash' | 'return_code' | 'failure_reason'>>;

/** Inserts a payment once: a second insert with its key (a retried step) changes nothing. */
export async function insertPayment(q: Queryable, p: NewPayment): Promise<void> {
  await insertPayments(q, [p]);
}

/** Inserts payments in one statement, each once (by its key). */
export async function insertPayments(q: Queryable, payments: NewPayment[]): Promise<void> {
  if (payments.length > 0) await paymentsInsert(q, payments).execute();
}

/** The statement that inserts payments (at least one), each once (by its key): to run, or to make part of another statement. */
export function paymentsInsert(q: Queryable, payments: NewPayment[]) {
  const now = new Date();
  return q.insertInto('payments').values(payments.map((p, i) => ({
    id: newId('payment', now.getTime() + i),
    developer_id: p.developer_id, environment: p.environment, transfer_id: p.transfer_id, kind: p.kind,
    rail: p.rail, currency: p.currency, amount_minor: p.amount_minor.toString(), status: p.status,
    external_account_id: p.external_account_id ?? null, from_address: p.from_address ?? null, to_address: p.to_address ?? null,
    provider_payment_id: p.provider_payment_id ?? null, tx_hash: p.tx_hash ?? null, signed_transaction: null, network_fee: null,
    return_code: p.return_code ?? null, failure_reason: p.failure_reason ?? null,
    idempotency_key: p.idempotency_key, settles_at: null, created_at: now, updated_at: now,
  }))).onConflict((oc) => oc.column('idempotency_key').doNothing());
}

/** What the provider or the chain answered when the payment went out. */
export interface PaymentSent { providerPaymentId?: string; txHash?: string; settlesAt?: Date }

const sentColumns = (sent: PaymentSent) => ({
  ...(sent.providerPaymentId ? { provider_payment_id: sent.providerPaymentId } : {}),
  ...(sent.txHash ? { tx_hash: sent.txHash } : {}),
  ...(sent.settlesAt ? { settles_at: sent.settlesAt } : {}),
});

/**
 * The payment went out (the provider took it, or the chain has its transaction): pending → submitted,
 * one more attempt counted, an earlier attempt's failure cleared. A retry that finds it submitted
 * already changes nothing.
 */
export async function markPaymentSubmitted(q: Queryable, ref: PaymentRef, sent: PaymentSent): Promise<void> {
  const [column, value] = byRef(ref);
  await q.updateTable('payments').set((eb) => ({
    status: 'submitted',
    ...sentColumns(sent),
    failure_reason: null,
    attempts: eb('attempts', '+', 1),
    updated_at: new Date(),
  })).where(column, '=', value).where('status', '=', 'pending').execute();
}

/** An attempt to send it failed and will be tried again: counted (unless told not to) and shown to operators. */
export async function notePaymentAttemptFailed(q: Queryable, ref: PaymentRef, reason: string, opts: { countAttempt?: boolean } = {}): Promise<void> {
  const [column, value] = byRef(ref);
  await q.updateTable('payments').set((eb) => ({
    failure_reason: reason, updated_at: new Date(), ...(opts.countAttempt === false ? {} : { attempts: eb('attempts', '+', 1) }),
  })).where(column, '=', value).execute();
}

/** Settled; `sent`: settled as it was sent, so also what markPaymentSubmitted records (the attempt counted once). */
export async function markPaymentSettled(
  q: Queryable, ref: PaymentRef, opts: { networkFee?: string | null; sent?: PaymentSent } = {},
): Promise<void> {
  await paymentSettledUpdate(q, ref, opts).execute();
}

/** markPaymentSettled's update, unexecuted: for a statement that makes it with another change. */
export function paymentSettledUpdate(q: Queryable, ref: PaymentRef, opts: { networkFee?: string | null; sent?: PaymentSent } = {}) {
  const [column, value] = byRef(ref);
  const { sent } = opts;
  return q.updateTable('payments').set((eb) => ({
    status: 'settled', failure_reason: null, ...(opts.networkFee !== undefined ? { network_fee: opts.networkFee } : {}), updated_at: new Date(),
    ...(sent ? { ...sentColumns(sent), attempts: eb.case().when('status', '=', 'pending').then(eb('attempts', '+', 1)).else(eb.ref('attempts')).end() } : {}),
  })).where(column, '=', value);
}

/** The rail or chain refused it, or it came back: failed or returned, with why. */
export async function markPaymentFailed(
  q: Queryable, ref: PaymentRef, outcome: { status: 'failed' | 'returned'; reason?: string | null; code?: string | null },
): Promise<void> {
  const [column, value] = byRef(ref);
  await q.updateTable('payments').set({
    status: outcome.status, return_code: outcome.code ?? null, ...(outcome.reason !== undefined ? { failure_reason: outcome.reason } : {}),
    updated_at: new Date(),
  }).where(column, '=', value).execute();
}

/** Held for operators with the reason (and the code a bank gave). `onlyIf`: only from that status. */
export async function markPaymentHeld(
  q: Queryable, ref: PaymentRef, hold: { reason: string | null; code?: string | null; onlyIf?: PaymentStatus },
): Promise<void> {
  const [column, value] = byRef(ref);
  let query = q.updateTable('payments').set({
    status: 'held', failure_reason: hold.reason, ...(hold.code !== undefined ? { return_code: hold.code } : {}), updated_at: new Date(),
  }).where(column, '=', value);
  if (hold.onlyIf) query = query.where('status', '=', hold.onlyIf);
  await query.execute();
}

/**
 * An operator released a held payment: the release is appended to its audit trail and it is pending
 * again (with `set`: a new address, a cleared transaction). False when it was no longer held.
 */
export async function releaseHeldPayment(
  q: Queryable, id: string, release: OperatorRelease, set: Partial<Pick<PaymentRow, 'to_address' | 'return_code' | 'signed_transaction' | 'tx_hash'>> & { replaced_tx_hashes?: null },
): Promise<boolean> {
  const updated = await q.updateTable('payments')
    .set({
      ...set, status: 'pending', failure_reason: null, updated_at: new Date(),
      operator_releases: sql<string>`coalesce(operator_releases, '[]'::jsonb) || ${JSON.stringify([release])}::jsonb`,
    })
    .where('id', '=', id).where('status', '=', 'held').executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Undoes a release that could not be acted on (its workflow did not start): held again as before, the release dropped. */
export async function undoRelease(q: Queryable, before: PaymentRow): Promise<void> {
  await q.updateTable('payments')
    .set({ status: 'held', failure_reason: before.failure_reason, return_code: before.return_code, operator_releases: sql<string>`operator_releases - -1`, updated_at: new Date() })
    .where('id', '=', before.id).where('status', '=', 'pending').execute();
}

// ---- chain transactions --------------------------------------------------------------------------

/** The signed transaction of a chain payment, and the ones it replaced (the same nonce, lower fees). */
export async function signedTransactionOf(q: Queryable, key: string, opts: { forUpdate?: boolean } = {}) {
  let query = q.selectFrom('payments').select(['signed_transaction', 'tx_hash', 'replaced_tx_hashes']).where('idempotency_key', '=', key);
  if (opts.forUpdate) query = query.forUpdate();
  return query.executeTakeFirstOrThrow();
}

/**
 * Stores a chain payment's signed transaction, before it is broadcast (a retry re-sends these bytes);
 * with `replaced`, the hashes of the transactions it replaces.
 */
export async function storeSignedTransaction(q: Queryable, key: string, signed: string, txHash: string, replaced?: string[]): Promise<void> {
  await q.updateTable('payments').set({
    signed_transaction: signed, tx_hash: txHash, ...(replaced ? { replaced_tx_hashes: JSON.stringify(replaced) } : {}), updated_at: new Date(),
  }).where('idempotency_key', '=', key).execute();
}

/** The transaction that was mined: the payment names it (an earlier one of the same nonce may have won). */
export async function recordMinedTransaction(q: Queryable, key: string, txHash: string, replaced?: string[]): Promise<void> {
  await q.updateTable('payments').set({
    tx_hash: txHash, ...(replaced ? { replaced_tx_hashes: JSON.stringify(replaced) } : {}), updated_at: new Date(),
  }).where('idempotency_key', '=', key).execute();
}
