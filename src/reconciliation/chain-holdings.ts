import { sql, type Transaction } from 'kysely';
import type { TreasuryHoldings } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { Database, Environment } from '../db/schema';
import { STRAY_DEPOSIT_KEY_PART, STRAY_RETURN_KEY_PART } from '../payments/keys';
import { exceptionsExcess, recordBalanceDifference } from './closing-balance';
import { newId } from '../ids';

// A chain treasury's holdings against the books (docs/RECONCILIATION.md, "The chain treasuries"):
// once a day, for each chain on a node and each token it carries, what the node says the treasury
// holds at one block is compared with what the books say the platform holds on that chain. The
// books are read first, in one snapshot; the node after, at the newest block deep enough to count,
// so whatever the books call final is in that block. What is in flight is explained, never flagged.

/** Reads the treasury's holdings of a currency from a chain's node, and which of the transactions asked about had landed. */
export type HoldingsReader = (chain: string, q: { currency: string; txHashes: string[] }) => Promise<TreasuryHoldings>;

/** One payment in flight at the books' snapshot, in minor units. */
export interface InFlight {
  amountMinor: bigint;
  /** The transaction that moves it into or out of the treasury, once there is one. */
  txHash: string | null;
}

/** What the books say of a chain's holdings of one currency, and what was in flight when they said it. */
export interface BooksHoldings {
  /** The chain's `chain_treasury` accounts, every tenant's in both environments: they go down as money comes in. */
  treasuryAccountsMinor: bigint;
  /** Deposits the books took that are still at their deposit address, with the sweep that moves them in, if any. */
  notSwept: InFlight[];
  /** Payouts and refunds the books posted when they were submitted, not yet final. */
  postedOut: InFlight[];
  /** Returns of stray deposits, which the books post once final, not yet final. */
  unpostedOut: InFlight[];
  /** The treasury's excess the account's exceptions name (matched by hand, or open and not a balance difference). */
  exceptionsExcessMinor: bigint;
}

export interface HoldingsCheck {
  booksMinor: bigint;
  explainedMinor: bigint;
  /** Node less books less explained: 0 when they agree. */
  differenceMinor: bigint;
}

/** The node's holdings against the books: in-flight money is explained by whether its transaction had landed at the node's block. */
export function holdingsCheck(nodeMinor: bigint, b: BooksHoldings, landed: ReadonlySet<string>): HoldingsCheck {
  const isIn = (p: InFlight) => p.txHash !== null && landed.has(p.txHash);
  const sum = (ps: InFlight[]) => ps.reduce((s, p) => s + p.amountMinor, 0n);
  const booksMinor = -b.treasuryAccountsMinor;
  const explainedMinor = -sum(b.notSwept.filter((p) => !isIn(p)))
    + sum(b.postedOut.filter((p) => !isIn(p)))
    - sum(b.unpostedOut.filter(isIn))
    + b.exceptionsExcessMinor;
  return { booksMinor, explainedMinor, differenceMinor: nodeMinor - booksMinor - explainedMinor };
}

/** The account a chain treasury's holdings of a currency are reconciled as: `base:usdc`. */
export const holdingsAccount = (chain: string, currency: string) => `${chain}:${currency}`;

/** Payment statuses of money still on its way. */
export const IN_FLIGHT = ['pending', 'submitted'] as const;
const inFlight = (rows: { amount_minor: string; tx_hash: string | null }[]): InFlight[] =>
  rows.map((r) => ({ amountMinor: BigInt(r.amount_minor), txHash: r.tx_hash }));

/** The chain's `chain_treasury` accounts in `currency`, every tenant's in both environments, summed. */
export async function treasuryAccounts(trx: Transaction<Database>, chain: string, currency: string): Promise<bigint> {
  const row = await trx.selectFrom('ledger_accounts').select((eb) => eb.fn.sum<string>('balance_minor').as('total'))
    .where('owner_type', '=', 'platform').where('owner_id', '=', chain).where('purpose', '=', 'chain_treasury').where('currency', '=', currency)
    .executeTakeFirst();
  return BigInt(row?.total ?? 0);
}

/** The books' side, in the caller's snapshot. */
export async function booksHoldings(
  trx: Transaction<Database>, q: { chain: string; currency: string; environment: Environment },
): Promise<BooksHoldings> {
  const payments = trx.selectFrom('payments').where('payments.rail', '=', q.chain).where('payments.currency', '=', q.currency);
  // A transfer's own deposit is swept under the transfer's id.
  const deposits = await payments.leftJoin('chain_sweeps as s', 's.sweep_key', 'payments.transfer_id')
    .select(['payments.amount_minor', 's.sweep_tx_hash as tx_hash'])
    .where('payments.kind', '=', 'deposit').where('payments.status', '=', 'settled').where((eb) => eb.or([eb('s.status', 'is', null), eb('s.status', '=', 'pending')]))
    .execute();
  // A stray deposit is in the books from its return's preparation on, and swept under the stray's own key.
  const strays = await payments
    .leftJoin('chain_sweeps as s', (join) => join.on('s.sweep_key', '=', sql<string>`replace(payments.idempotency_key, ${STRAY_RETURN_KEY_PART}, ${STRAY_DEPOSIT_KEY_PART})`))
    .select(['payments.amount_minor', 'payments.status', 'payments.tx_hash', 's.sweep_tx_hash', 's.status as sweep_status'])
    .where('payments.kind', '=', 'deposit_return')
    .where((eb) => eb.or([eb('s.status', 'is', null), eb('s.status', '=', 'pending'), eb('payments.status', 'in', IN_FLIGHT)]))
    .execute();
  const out = await payments.select(['amount_minor', 'tx_hash']).where('kind', 'in', ['payout', 'refund']).where('status', 'in', IN_FLIGHT).execute();
  return {
    treasuryAccountsMinor: await treasuryAccounts(trx, q.chain, q.currency),
    notSwept: [
      ...inFlight(deposits),
      ...inFlight(strays.filter((s) => s.sweep_status !== 'swept').map((s) => ({ amount_minor: s.amount_minor, tx_hash: s.sweep_tx_hash }))),
    ],
    postedOut: inFlight(out),
    unpostedOut: inFlight(strays.filter((s) => (IN_FLIGHT as readonly string[]).includes(s.status))),
    exceptionsExcessMinor: await exceptionsExcess(trx, { account: holdingsAccount(q.chain, q.currency), environment: q.environment }),
  };
}

/** Every transaction whose landing the check needs to know. */
const askedAbout = (b: BooksHoldings) =>
  [...b.notSwept, ...b.postedOut, ...b.unpostedOut].flatMap((p) => (p.txHash ? [p.txHash] : []));

export interface HoldingsDay {
  chain: string;
  currency: string;
  /** The block (or slot) the node's holdings were read at. */
  position: string;
  /** Node less books less explained, in minor units (a string: the report is JSON). */
  differenceMinor: string;
}

/**
 * Each chain's treasury holdings of each currency against the books, once per daily run (`runKey`):
 * a holdings run per chain and currency, and a `balance_difference` exception where they disagree.
 */
export async function reconcileChainHoldings(
  db: Db, read: { holdings: { chain: string; currencies: string[] }[]; holdingsOf: HoldingsReader },
  opts: { runKey: string; environment: Environment }, now = new Date(),
): Promise<HoldingsDay[]> {
  const days: HoldingsDay[] = [];
  for (const { chain, currencies } of read.holdings) {
    for (const currency of currencies) {
      const done = await recordedHoldingsDay(db, opts.runKey, chain, currency);
      if (done) {
        days.push(done);
        continue;
      }
      // The books first, in one snapshot; the node after: what the books call final is in the node's block.
      const books = await db.transaction().setIsolationLevel('repeatable read').execute((trx) => booksHoldings(trx, { chain, currency, environment: opts.environment }));
      const node = await read.holdingsOf(chain, { currency, txHashes: askedAbout(books) });
      const check = holdingsCheck(node.minor, books, new Set(node.landed));
      await recordHoldingsRun(db, { chain, currency, ...opts, periodFrom: now }, node, check, now);
      days.push({ chain, currency, position: node.position, differenceMinor: check.differenceMinor.toString() });
    }
  }
  return days;
}

/** The holdings run this daily run recorded already for the chain and currency, as its day shows it. */
export async function recordedHoldingsDay(db: Db, runKey: string, chain: string, currency: string): Promise<HoldingsDay | undefined> {
  const done = await db.selectFrom('reconciliation_runs').select(['chain_position', 'balance_difference_minor'])
    .where('kind', '=', 'holdings').where('day_run_key', '=', runKey).where('account', '=', holdingsAccount(chain, currency)).executeTakeFirst();
  return done && { chain, currency, position: done.chain_position ?? '', differenceMinor: String(done.balance_difference_minor ?? '0') };
}

/**
 * A holdings run, once per daily run and account (a retry that finds it records nothing), with its
 * difference as an exception; `alongside` writes what else belongs to it in the same transaction.
 */
export async function recordHoldingsRun(
  db: Db, run: { chain: string; currency: string; runKey: string; environment: Environment; periodFrom: Date },
  node: { position: string; minor: bigint }, check: HoldingsCheck, now: Date,
  extra: { matched?: number; spentMinor?: bigint; alongside?: (trx: Transaction<Database>, runId: string) => Promise<void> } = {},
): Promise<void> {
  const account = holdingsAccount(run.chain, run.currency);
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`reconciliation:${account}`}))`.execute(trx);
    const done = await trx.selectFrom('reconciliation_runs').select('id')
      .where('kind', '=', 'holdings').where('day_run_key', '=', run.runKey).where('account', '=', account).executeTakeFirst();
    if (done) return;
    const id = newId('reconciliationRun', now.getTime());
    await trx.insertInto('reconciliation_runs').values({
      id, kind: 'holdings', day_run_key: run.runKey, statement_file_id: null, account, rail: run.chain, environment: run.environment,
      period_from: run.periodFrom, period_to: now, statement_closing_minor: node.minor.toString(), chain_position: node.position, matched: extra.matched ?? 0,
      exceptions_opened: check.differenceMinor === 0n ? 0 : 1, created_at: now, spent_minor: extra.spentMinor?.toString() ?? null,
      books_minor: check.booksMinor.toString(), explained_minor: check.explainedMinor.toString(), balance_difference_minor: check.differenceMinor.toString(),
    }).execute();
    await extra.alongside?.(trx, id);
    await recordBalanceDifference(trx, { id, account, rail: run.chain, currency: run.currency, environment: run.environment, what: `holdings at ${node.position}` }, check.differenceMinor, now);
  });
}
