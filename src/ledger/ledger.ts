import { sql, type Kysely, type Transaction } from 'kysely';
import type { Tenant } from '../db/tenant-scope';
import type { Database, LedgerPurpose } from '../db/schema';
import { newId } from '../ids';

type Executor = Kysely<Database> | Transaction<Database>;

export interface LedgerAccountRef {
  ownerType: 'customer' | 'developer' | 'platform' | 'account';
  ownerId: string;
  purpose: LedgerPurpose;
  /** Lower-case asset code: usd, eur, usdc, … */
  currency: string;
}

/** One side of a movement: a positive amount raises the account's balance, a negative one lowers it. */
export interface Posting {
  account: LedgerAccountRef;
  amountMinor: bigint;
}

/**
 * The platform's own books: money with the platform that belongs to no developer yet (a deposit
 * through the provider's webhook that names no transfer). No key reaches them; the provider's
 * account is production money (the sandbox's own routes always name their transfer).
 */
export const PLATFORM_TENANT: Tenant = { developerId: 'platform', environment: 'production' };

export class LedgerError extends Error {
  constructor(readonly code: 'unbalanced' | 'insufficient_funds' | 'empty', message: string) {
    super(message);
  }
}

/** Accounts that mirror the outside world (money in flight with banks and chains, FX legs) may go negative. */
const MAY_GO_NEGATIVE: Record<LedgerPurpose, boolean> = {
  customer_funds: false,
  platform_fees: false,
  developer_fees: false,
  rail_clearing: true,
  chain_treasury: true,
  fx_conversion: true,
  unapplied_deposits: false,
  account_reserved: false,
};

/** The one account a reference names (tenant, owner, purpose, currency). */
function accountRow(db: Executor, tenant: Tenant, ref: LedgerAccountRef) {
  return db
    .selectFrom('ledger_accounts')
    .where('developer_id', '=', tenant.developerId)
    .where('environment', '=', tenant.environment)
    .where('owner_type', '=', ref.ownerType)
    .where('owner_id', '=', ref.ownerId)
    .where('purpose', '=', ref.purpose)
    .where('currency', '=', ref.currency);
}

interface LockedAccount {
  id: string;
  owner_type: string;
  owner_id: string;
  purpose: LedgerPurpose;
  currency: string;
  balance_minor: string;
  allow_negative: boolean;
}

const refKey = (r: { owner_type?: string; ownerType?: string; owner_id?: string; ownerId?: string; purpose: string; currency: string }) =>
  `${r.owner_type ?? r.ownerType}|${r.owner_id ?? r.ownerId}|${r.purpose}|${r.currency}`;

/** The accounts the references name, locked for update in id order (so concurrent movements cannot deadlock). */
function lockAccounts(trx: Transaction<Database>, tenant: Tenant, refs: LedgerAccountRef[]): Promise<LockedAccount[]> {
  return trx.selectFrom('ledger_accounts')
    .select(['id', 'owner_type', 'owner_id', 'purpose', 'currency', 'balance_minor', 'allow_negative'])
    .where('developer_id', '=', tenant.developerId).where('environment', '=', tenant.environment)
    .where((eb) => eb.or(refs.map((r) => eb.and([
      eb('owner_type', '=', r.ownerType), eb('owner_id', '=', r.ownerId), eb('purpose', '=', r.purpose), eb('currency', '=', r.currency),
    ]))))
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * The accounts of a movement, locked: one query once they exist; the first movement of a new
 * account creates it, then locks again.
 */
async function lockOrCreateAccounts(trx: Transaction<Database>, tenant: Tenant, refs: LedgerAccountRef[]): Promise<Map<string, LockedAccount>> {
  const unique = [...new Map(refs.map((r) => [refKey(r), r])).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, r]) => r);
  let locked = await lockAccounts(trx, tenant, unique);
  if (locked.length < unique.length) {
    const found = new Set(locked.map(refKey));
    const now = new Date();
    // Sorted, so concurrent movements creating the same new accounts insert them in the same order.
    await trx.insertInto('ledger_accounts').values(unique.filter((r) => !found.has(refKey(r))).map((ref, i) => ({
      id: newId('ledgerAccount', now.getTime() + i),
      developer_id: tenant.developerId,
      environment: tenant.environment,
      owner_type: ref.ownerType,
      owner_id: ref.ownerId,
      purpose: ref.purpose,
      currency: ref.currency,
      allow_negative: MAY_GO_NEGATIVE[ref.purpose],
      created_at: now,
    }))).onConflict((oc) => oc.columns(['developer_id', 'environment', 'owner_type', 'owner_id', 'purpose', 'currency']).doNothing()).execute();
    locked = await lockAccounts(trx, tenant, unique);
  }
  return new Map(locked.map((a) => [refKey(a), a]));
}

/**
 * Records one movement as a balanced set of entries (per currency they sum to zero), inside the
 * caller's database transaction. Idempotent by key: a second call with the same key changes nothing
 * and returns the first transaction. Balances that may not go negative are checked under row locks
 * (taken in id order, so concurrent movements cannot deadlock).
 */
export async function postTransaction(
  trx: Transaction<Database>,
  tenant: Tenant,
  movement: { idempotencyKey: string; description: string; referenceId?: string; postings: Posting[] },
): Promise<{ transactionId: string; replayed: boolean }> {
  if (movement.postings.length < 2) throw new LedgerError('empty', 'A movement needs at least two postings');
  const sums = new Map<string, bigint>();
  for (const p of movement.postings) {
    if (p.amountMinor === 0n) throw new LedgerError('empty', 'A posting of zero moves nothing');
    sums.set(p.account.currency, (sums.get(p.account.currency) ?? 0n) + p.amountMinor);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n) throw new LedgerError('unbalanced', `Postings in ${currency} sum to ${sum}, not zero`);
  }

  // The accounts first, locked (in id order); then the transaction, its balances and its entries in
  // one statement that writes nothing when the key was recorded before (a replay).
  const accounts = await lockOrCreateAccounts(trx, tenant, movement.postings.map((p) => p.account));
  const accountIds = movement.postings.map((p) => accounts.get(refKey(p.account))!.id);
  const deltas = new Map<string, bigint>();
  accountIds.forEach((accountId, i) => deltas.set(accountId, (deltas.get(accountId) ?? 0n) + movement.postings[i].amountMinor));
  const balances: { id: string; balance: string }[] = [];
  for (const account of accounts.values()) {
    const next = BigInt(account.balance_minor) + deltas.get(account.id)!;
    if (next < 0n && !account.allow_negative) {
      // A replay of a movement that already took the money is no shortage.
      const recorded = await recordedTransaction(trx, movement.idempotencyKey);
      if (recorded) return { transactionId: recorded, replayed: true };
      throw new LedgerError('insufficient_funds', `${account.purpose} of ${account.owner_id} in ${account.currency} would go below zero`);
    }
    balances.push({ id: account.id, balance: next.toString() });
  }
  const now = new Date();
  const id = newId('ledgerTransaction', now.getTime());
  const inserted = await sql<{ id: string }>`
    with tx as (
      insert into ledger_transactions (id, developer_id, environment, idempotency_key, description, reference_id, created_at)
      values (${id}, ${tenant.developerId}, ${tenant.environment}, ${movement.idempotencyKey}, ${movement.description},
              ${movement.referenceId ?? null}, ${now})
      on conflict (idempotency_key) do nothing
      returning id
    ), new_balances as (
      update ledger_accounts a set balance_minor = v.balance::numeric
      from (values ${sql.join(balances.map((b) => sql`(${b.id}::text, ${b.balance}::text)`))}) as v(id, balance)
      where a.id = v.id and exists (select 1 from tx)
    ), entries as (
      insert into ledger_entries (transaction_id, account_id, currency, amount_minor, created_at)
      select tx.id, e.account_id, e.currency, e.amount_minor, e.created_at from tx cross join (values ${sql.join(movement.postings.map((p, i) =>
        sql`(${i}::int, ${accountIds[i]}::text, ${p.account.currency}::text, ${p.amountMinor.toString()}::numeric, ${now}::timestamptz)`))})
        as e(n, account_id, currency, amount_minor, created_at)
      order by e.n
    )
    select id from tx`.execute(trx);
  if (inserted.rows.length === 0) return { transactionId: (await recordedTransaction(trx, movement.idempotencyKey))!, replayed: true };
  return { transactionId: id, replayed: false };
}

/** The id of the movement recorded under a key, if any. */
async function recordedTransaction(db: Executor, idempotencyKey: string): Promise<string | undefined> {
  const row = await db.selectFrom('ledger_transactions').select('id').where('idempotency_key', '=', idempotencyKey).executeTakeFirst();
  return row?.id;
}

export async function balanceOf(db: Executor, tenant: Tenant, ref: LedgerAccountRef): Promise<bigint> {
  const row = await accountRow(db, tenant, ref).select('balance_minor').executeTakeFirst();
  return row ? BigInt(row.balance_minor) : 0n;
}

/**
 * The ledger's invariants, checked from the entries themselves: every transaction sums to zero per
 * currency, all entries sum to zero per currency, cached balances equal their entries, and accounts
 * that may not go negative are not negative.
 */
export async function verifyLedger(db: Executor) {
  const problems: string[] = [];
  const unbalanced = await sql<{ transaction_id: string; currency: string; total: string }>`
    select transaction_id, currency, sum(amount_minor)::text as total from ledger_entries
    group by transaction_id, currency having sum(amount_minor) <> 0`.execute(db);
  for (const r of unbalanced.rows) problems.push(`transaction ${r.transaction_id} sums to ${r.total} ${r.currency}`);
  const totals = await sql<{ currency: string; total: string }>`
    select currency, sum(amount_minor)::text as total from ledger_entries group by currency having sum(amount_minor) <> 0`.execute(db);
  for (const r of totals.rows) problems.push(`all ${r.currency} entries sum to ${r.total}`);
  const drift = await sql<{ id: string; balance: string; entries: string }>`
    select a.id, a.balance_minor::text as balance, coalesce(sum(e.amount_minor), 0)::text as entries
    from ledger_accounts a left join ledger_entries e on e.account_id = a.id
    group by a.id, a.balance_minor having a.balance_minor <> coalesce(sum(e.amount_minor), 0)`.execute(db);
  for (const r of drift.rows) problems.push(`account ${r.id} caches ${r.balance} but its entries sum to ${r.entries}`);
  const negative = await sql<{ id: string; balance: string }>`
    select id, balance_minor::text as balance from ledger_accounts where not allow_negative and balance_minor < 0`.execute(db);
  for (const r of negative.rows) problems.push(`account ${r.id} is negative (${r.balance}) but may not be`);
  const counts = await sql<{ transactions: string; entries: string; accounts: string }>`
    select (select count(*) from ledger_transactions)::text as transactions, (select count(*) from ledger_entries)::text as entries,
           (select count(*) from ledger_accounts)::text as accounts`.execute(db);
  return {
    ok: problems.length === 0,
    problems,
    transactions: Number(counts.rows[0].transactions),
    entries: Number(counts.rows[0].entries),
    accounts: Number(counts.rows[0].accounts),
  };
}
