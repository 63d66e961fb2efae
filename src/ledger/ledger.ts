import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
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
  reconciliation_suspense: true,
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

const refKey = (r: LedgerAccountRef) => `${r.ownerType}|${r.ownerId}|${r.purpose}|${r.currency}`;

/** The first movement of new accounts creates them (sorted, so concurrent first movements insert in the same order). */
async function createAccounts(trx: Transaction<Database>, tenant: Tenant, refs: LedgerAccountRef[]) {
  const now = new Date();
  await trx.insertInto('ledger_accounts').values(refs.map((ref, i) => ({
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
}

const refColumns = (r: LedgerAccountRef) => sql`${r.ownerType}::text, ${r.ownerId}::text, ${r.purpose}::text, ${r.currency}::text`;

/**
 * A movement's statement begins with its accounts' deltas (`deltas`) and the accounts locked in id
 * order (`locked`, with each delta): concurrent movements cannot deadlock. `after`: a condition the
 * locking waits for (another change of the same statement, whose row lock comes first).
 */
function lockedWithDeltas(tenant: Tenant, accounts: { ref: LedgerAccountRef; delta: bigint }[], after: RawBuilder<boolean> = sql`true`) {
  return sql`
    deltas (owner_type, owner_id, purpose, currency, delta) as (
      values ${sql.join(accounts.map((a) => sql`(${refColumns(a.ref)}, ${a.delta.toString()}::numeric)`))}
    ), locked as (
      select a.id, a.owner_type, a.owner_id, a.purpose, a.currency, a.balance_minor, a.allow_negative, d.delta
      from ledger_accounts a
      join deltas d on (a.owner_type, a.owner_id, a.purpose, a.currency) = (d.owner_type, d.owner_id, d.purpose, d.currency)
      where a.developer_id = ${tenant.developerId} and a.environment = ${tenant.environment} and ${after}
      order by a.id
      for update of a
    )`;
}

/**
 * The movement as one statement: its accounts locked in id order (concurrent movements cannot
 * deadlock), their balances checked, and only if every account exists and none that may not go
 * negative would, the transaction, its entries and the new balances; nothing when the key was
 * recorded before (a replay). Answers the transaction's id (null: not written), how many of the
 * accounts exist, and an account that would go short.
 */
async function postInOneStatement(
  trx: Transaction<Database>, tenant: Tenant, movement: { idempotencyKey: string; description: string; referenceId?: string; postings: Posting[] },
  accounts: { ref: LedgerAccountRef; delta: bigint }[],
) {
  const now = new Date();
  const id = newId('ledgerTransaction', now.getTime());
  const result = await sql<{ id: string | null; found: number; short: string | null }>`
    with ${lockedWithDeltas(tenant, accounts)}, verdict as (
      select count(*)::int as found,
        min(case when not l.allow_negative and l.balance_minor + l.delta < 0 then l.purpose || ' of ' || l.owner_id || ' in ' || l.currency end) as short
      from locked l
    ), tx as (
      insert into ledger_transactions (id, developer_id, environment, idempotency_key, description, reference_id, created_at)
      select ${id}, ${tenant.developerId}, ${tenant.environment}, ${movement.idempotencyKey}, ${movement.description}, ${movement.referenceId ?? null}, ${now}
      from verdict where verdict.found = ${accounts.length} and verdict.short is null
      on conflict (idempotency_key) do nothing
      returning id
    ), new_balances as (
      update ledger_accounts a set balance_minor = a.balance_minor + l.delta
      from locked l where a.id = l.id and exists (select 1 from tx)
    ), entries as (
      insert into ledger_entries (transaction_id, account_id, currency, amount_minor, created_at)
      select tx.id, l.id, e.currency, e.amount_minor, ${now}::timestamptz
      from tx cross join (values ${sql.join(movement.postings.map((p, i) => sql`(${i}::int, ${refColumns(p.account)}, ${p.amountMinor.toString()}::numeric)`))})
        as e(n, owner_type, owner_id, purpose, currency, amount_minor)
      join locked l on (l.owner_type, l.owner_id, l.purpose, l.currency) = (e.owner_type, e.owner_id, e.purpose, e.currency)
      order by e.n
    )
    select (select id from tx) as id, verdict.found, verdict.short from verdict`.execute(trx);
  return result.rows[0]!;
}

/**
 * Several movements as one statement, all or nothing: written only when every account exists, none
 * of their keys was recorded before and the balances allow them all (checked after all of them).
 * Answers whether it wrote them; a key another transaction recorded meanwhile is an error (the
 * caller's transaction rolls back and is tried again).
 */
async function postAllInOneStatement(trx: Transaction<Database>, tenant: Tenant, movements: Movement[], accounts: { ref: LedgerAccountRef; delta: bigint }[]) {
  const result = await sql<{ written: number }>`
    with ${allMovementsCtes(tenant, movements, accounts)}
    select (select count(*) from tx)::int as written`.execute(trx);
  const written = result.rows[0]!.written;
  if (written > 0 && written < movements.length) throw new Error('A ledger movement of this change was recorded meanwhile by another transaction: the change is tried again');
  return written === movements.length;
}

/**
 * The common table expressions that write several movements, all or none (postAllInOneStatement),
 * ending in `tx`, the transactions written. `after`: as lockedWithDeltas takes it.
 */
function allMovementsCtes(tenant: Tenant, movements: Movement[], accounts: { ref: LedgerAccountRef; delta: bigint }[], after?: RawBuilder<boolean>) {
  const now = new Date();
  const ids = movements.map((_, i) => newId('ledgerTransaction', now.getTime() + i));
  const entries = movements.flatMap((m, i) => m.postings.map((p) => ({ transactionId: ids[i]!, posting: p })));
  return sql`
    ${lockedWithDeltas(tenant, accounts, after)}, verdict as (
      select count(*)::int as found, bool_and(l.allow_negative or l.balance_minor + l.delta >= 0) as covered
      from locked l
    ), tx as (
      insert into ledger_transactions (id, developer_id, environment, idempotency_key, description, reference_id, created_at)
      select m.id, ${tenant.developerId}, ${tenant.environment}, m.idempotency_key, m.description, m.reference_id, ${now}
      from (values ${sql.join(movements.map((m, i) => sql`(${ids[i]}::text, ${m.idempotencyKey}::text, ${m.description}::text, ${m.referenceId ?? null}::text, ${i}::int)`))})
        as m(id, idempotency_key, description, reference_id, n)
      cross join verdict
      where verdict.found = ${accounts.length} and verdict.covered
        and not exists (select 1 from ledger_transactions t where t.idempotency_key in (${sql.join(movements.map((m) => m.idempotencyKey))}))
      order by m.n
      on conflict (idempotency_key) do nothing
      returning id
    ), new_balances as (
      update ledger_accounts a set balance_minor = a.balance_minor + l.delta
      from locked l where a.id = l.id and (select count(*) from tx) = ${movements.length}
    ), new_entries as (
      insert into ledger_entries (transaction_id, account_id, currency, amount_minor, created_at)
      select e.transaction_id, l.id, e.currency, e.amount_minor, ${now}::timestamptz
      from (values ${sql.join(entries.map((e, n) => sql`(${n}::int, ${e.transactionId}::text, ${refColumns(e.posting.account)}, ${e.posting.amountMinor.toString()}::numeric)`))})
        as e(n, transaction_id, owner_type, owner_id, purpose, currency, amount_minor)
      join locked l on (l.owner_type, l.owner_id, l.purpose, l.currency) = (e.owner_type, e.owner_id, e.purpose, e.currency)
      where (select count(*) from tx) = ${movements.length}
      order by e.n
    )`;
}

/**
 * Movements written by another change's own statement (a transfer's step, src/transfers/steps.ts):
 * its common table expressions, which lock the accounts only once `after` holds (the change has
 * taken its row's lock), and the condition that they were all written. The statement must fail
 * unless it holds: then nothing of it was made (accounts to create, a replay or a short account are
 * for postTransactions, in a transaction).
 */
export function movementsOfStatement(tenant: Tenant, movements: Movement[], after: RawBuilder<boolean>): { ctes: RawBuilder<unknown>; allWritten: RawBuilder<boolean> } {
  movements.forEach(checkMovement);
  return {
    ctes: allMovementsCtes(tenant, movements, accountDeltas(movements), after),
    allWritten: sql<boolean>`(select count(*) from tx) = ${movements.length}`,
  };
}

/**
 * Records one movement as a balanced set of entries (per currency they sum to zero), inside the
 * caller's database transaction. Idempotent by key: a second call with the same key changes nothing
 * and returns the first transaction. Balances that may not go negative are checked under row locks
 * (taken in id order, so concurrent movements cannot deadlock).
 */
export async function postTransaction(trx: Transaction<Database>, tenant: Tenant, movement: Movement): Promise<{ transactionId: string; replayed: boolean }> {
  checkMovement(movement);
  const accounts = accountDeltas([movement]);
  let posted = await postInOneStatement(trx, tenant, movement, accounts);
  if (posted.found < accounts.length) {
    await createAccounts(trx, tenant, accounts.map((a) => a.ref));
    posted = await postInOneStatement(trx, tenant, movement, accounts);
  }
  if (posted.id) return { transactionId: posted.id, replayed: false };
  // Not written: recorded before under the key (a replay, also of a movement that already took the money), or short.
  const recorded = await recordedTransaction(trx, movement.idempotencyKey);
  if (recorded) return { transactionId: recorded, replayed: true };
  throw new LedgerError('insufficient_funds', `${posted.short ?? 'an account'} would go below zero`);
}

/**
 * Movements of one change (a transfer's steps recorded together), in one statement when every
 * account exists, none of their keys was recorded before and no account that may not go negative
 * would after all of them; otherwise one by one, as postTransaction posts them (creating accounts,
 * answering replays, refusing one that goes short). Either way inside the caller's transaction.
 */
export async function postTransactions(trx: Transaction<Database>, tenant: Tenant, movements: Movement[]): Promise<void> {
  if (movements.length > 1) {
    movements.forEach(checkMovement);
    if (await postAllInOneStatement(trx, tenant, movements, accountDeltas(movements))) return;
  }
  for (const movement of movements) await postTransaction(trx, tenant, movement);
}

export interface Movement {
  idempotencyKey: string;
  description: string;
  referenceId?: string;
  postings: Posting[];
}

function checkMovement(movement: Movement) {
  if (movement.postings.length < 2) throw new LedgerError('empty', 'A movement needs at least two postings');
  const sums = new Map<string, bigint>();
  for (const p of movement.postings) {
    if (p.amountMinor === 0n) throw new LedgerError('empty', 'A posting of zero moves nothing');
    sums.set(p.account.currency, (sums.get(p.account.currency) ?? 0n) + p.amountMinor);
  }
  for (const [currency, sum] of sums) {
    if (sum !== 0n) throw new LedgerError('unbalanced', `Postings in ${currency} sum to ${sum}, not zero`);
  }
}

/** Each account once, with the sum of its postings; sorted, so that missing ones are created in one order. */
function accountDeltas(movements: Movement[]): { ref: LedgerAccountRef; delta: bigint }[] {
  const byAccount = new Map<string, { ref: LedgerAccountRef; delta: bigint }>();
  for (const p of movements.flatMap((m) => m.postings)) {
    const key = refKey(p.account);
    byAccount.set(key, { ref: p.account, delta: (byAccount.get(key)?.delta ?? 0n) + p.amountMinor });
  }
  return [...byAccount.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, a]) => a);
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
