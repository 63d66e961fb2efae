import type { ExpressionBuilder, Transaction } from 'kysely';
import type { DataCipher } from '../crypto';
import type { Database, Environment } from '../db/schema';
import { bankExcessMinor, railCurrency } from './exceptions';
import { expectedBankLines, RAILS_OF_ACCOUNT } from './expected-lines';
import { lineJson, signedMinor } from './matching';
import { newId } from '../ids';

// The closing balance of a bank account's statement against the books (docs/RECONCILIATION.md,
// "The closing balance"). The books' position of the account is what its rails' clearing accounts
// say, every tenant's, read when the run runs, less what the books recorded with the bank after the
// statement's cut-off. What the books know to differ is explained, never flagged: the exceptions
// not written off, the shortfalls matched within tolerance, payouts posted but not yet at the bank,
// and micro-deposits, which the ledger does not carry. Whatever is left is a balance difference.

export interface BalanceCheck {
  booksMinor: bigint;
  explainedMinor: bigint;
  /** Closing less books less explained: 0 when they agree. */
  differenceMinor: bigint;
}

export interface BalanceCheckInput {
  account: string;
  rail: 'ach' | 'sepa';
  environment: Environment;
  /** When the statement was received: the books' position is taken as of then. */
  cutoff: Date;
  closingMinor: bigint;
}

const minor = (v: unknown) => BigInt(String(v ?? 0));

/** What the books say of a bank account, each in minor units of its currency (docs/RECONCILIATION.md, "The closing balance"). */
export interface BooksSide {
  /** The rails' clearing accounts, every tenant's: they go up as money leaves the bank. */
  clearingMinor: bigint;
  /** What the books recorded with the bank after the cut-off (the next statement's lines), signed: credits in. */
  afterCutoffMinor: bigint;
  /** The bank's excess the account's exceptions name (not written off, not settled by a later statement). */
  exceptionsExcessMinor: bigint;
  /** Credits matched short within tolerance. */
  shortfallMinor: bigint;
  /** Payouts posted when queued, not yet in a file the bank took. */
  notYetAtBankMinor: bigint;
  /** Micro-deposits paid (negative) and recovered (positive): the ledger carries neither. */
  microDepositsMinor: bigint;
}

/** The closing balance against the books: the bank's cash is the clearing accounts' negation, as of the cut-off, plus what is explained. */
export function balanceCheck(closingMinor: bigint, b: BooksSide): BalanceCheck {
  const booksMinor = -b.clearingMinor - b.afterCutoffMinor;
  const explainedMinor = b.exceptionsExcessMinor - b.shortfallMinor + b.notYetAtBankMinor + b.microDepositsMinor;
  return { booksMinor, explainedMinor, differenceMinor: closingMinor - booksMinor - explainedMinor };
}

/** The books' side of the account, read in the run's transaction (after its exceptions are recorded). */
async function booksSide(trx: Transaction<Database>, cipher: DataCipher, q: BalanceCheckInput, now: Date): Promise<BooksSide> {
  const rails = [...RAILS_OF_ACCOUNT[q.rail]];
  const clearing = await trx.selectFrom('ledger_accounts').select((eb) => eb.fn.sum<string>('balance_minor').as('total'))
    .where('environment', '=', q.environment).where('owner_type', '=', 'platform').where('purpose', '=', 'rail_clearing')
    .where('owner_id', 'in', rails).where('currency', '=', railCurrency(q.rail)).executeTakeFirst();
  const afterCutoff = await expectedBankLines(trx, cipher, { rail: q.rail, environment: q.environment, from: q.cutoff, to: new Date(now.getTime() + 1) });
  return {
    clearingMinor: minor(clearing?.total), afterCutoffMinor: afterCutoff.reduce((s, l) => s + signedMinor(l), 0n),
    exceptionsExcessMinor: await exceptionsExcess(trx, q), shortfallMinor: await shortfalls(trx, q),
    notYetAtBankMinor: await notYetAtBank(trx, q, rails), microDepositsMinor: await microDeposits(trx, q, rails),
  };
}

/**
 * What the account's exceptions say the bank holds beyond the books: those open or under
 * investigation, and those an operator matched by hand (the difference accepted). Written-off ones
 * moved the books; those a later statement settled are on the bank's side now.
 */
export async function exceptionsExcess(trx: Transaction<Database>, q: { account: string; environment: Environment }) {
  const rows = await trx.selectFrom('reconciliation_exceptions').select(['statement_line', 'expected_line'])
    .where('account', '=', q.account).where('environment', '=', q.environment)
    .where((eb) => eb.or([
      eb.and([eb('status', 'in', ['open', 'investigating']), eb('type', '<>', 'balance_difference')]),
      eb.and([eb('status', '=', 'resolved'), eb('resolution', '=', 'matched'), eb('resolved_by', '<>', 'reconciliation')]),
    ])).execute();
  return rows.reduce((s, r) => s + bankExcessMinor(r), 0n);
}

/** Credits matched within the shortfall tolerance: the bank holds that much less. */
async function shortfalls(trx: Transaction<Database>, q: BalanceCheckInput) {
  const row = await trx.selectFrom('reconciliation_runs').select((eb) => eb.fn.sum<string>('shortfall_minor').as('total'))
    .where('account', '=', q.account).where('environment', '=', q.environment).executeTakeFirst();
  return minor(row?.total);
}

const MICRO_DEPOSITS = ['micro_deposit', 'micro_deposit_recovery'];

/** Payments out (payouts, refunds, deposit returns) the books posted when queued, not yet in a file the bank took: the bank still holds them. */
async function notYetAtBank(trx: Transaction<Database>, q: BalanceCheckInput, rails: string[]) {
  const row = await trx.selectFrom('bank_payments as p').leftJoin('bank_files as f', 'f.id', 'p.file_id')
    .select((eb) => eb.fn.sum<string>('p.amount_minor').as('total'))
    .where('p.environment', '=', q.environment).where('p.rail', 'in', rails).where('p.direction', '=', 'credit').where('p.purpose', 'not in', MICRO_DEPOSITS)
    .where((eb) => eb.or([eb('p.status', '=', 'queued'), eb.and([eb('p.status', '=', 'filed'), eb('f.status', '=', 'recorded')])]))
    .executeTakeFirst();
  return minor(row?.total);
}

/**
 * Micro-deposits in files the bank took, less their recovery debits: no ledger entry records either
 * (an account's verification costs the platform nothing once they come back). Returned ones came back.
 */
async function microDeposits(trx: Transaction<Database>, q: BalanceCheckInput, rails: string[]) {
  const rows = await trx.selectFrom('bank_payments as p').innerJoin('bank_files as f', 'f.id', 'p.file_id')
    .select(['p.purpose', (eb) => eb.fn.sum<string>('p.amount_minor').as('total')])
    .where('p.environment', '=', q.environment).where('p.rail', 'in', rails).where('p.status', '=', 'filed').where('f.status', '<>', 'recorded')
    .where('p.purpose', 'in', MICRO_DEPOSITS).groupBy('p.purpose').execute();
  return rows.reduce((s, r) => s + (r.purpose === 'micro_deposit' ? -minor(r.total) : minor(r.total)), 0n);
}

/** The run's comparison recorded on it, and a difference as an exception (recordBalanceDifference). */
export async function recordClosingBalance(trx: Transaction<Database>, cipher: DataCipher, run: BalanceCheckInput & { id: string }, now: Date): Promise<BalanceCheck> {
  const check = balanceCheck(run.closingMinor, await booksSide(trx, cipher, run, now));
  await trx.updateTable('reconciliation_runs').where('id', '=', run.id)
    .set({ books_minor: check.booksMinor.toString(), explained_minor: check.explainedMinor.toString(), balance_difference_minor: check.differenceMinor.toString() }).execute();
  await recordBalanceDifference(trx, { ...run, currency: null, what: 'closing balance' }, check.differenceMinor, now);
  return check;
}

/**
 * A difference between what is held outside (a bank's closing balance, a chain treasury's holdings)
 * and the books opens a `balance_difference` exception (its outside side the difference, so that it
 * counts as the outside's excess once an operator accepts it); an agreement settles the account's
 * open ones (a timing difference gone).
 */
export async function recordBalanceDifference(
  trx: Transaction<Database>, run: { id: string; account: string; rail: string; currency: string | null; environment: Environment; what: string }, differenceMinor: bigint, now: Date,
): Promise<void> {
  const account = (eb: ExpressionBuilder<Database, 'reconciliation_exceptions'>) => eb.and([eb('account', '=', run.account), eb('environment', '=', run.environment)]);
  if (differenceMinor === 0n) {
    await trx.updateTable('reconciliation_exceptions')
      .set({ status: 'resolved', resolution: 'matched', reason: `the ${run.what} agrees with the books on run ${run.id}`, resolved_by: 'reconciliation', resolved_at: now, updated_at: now })
      .where(account).where('type', '=', 'balance_difference').where('status', '=', 'open').execute();
    return;
  }
  const d = differenceMinor;
  const line = { id: `closing:${run.id}`, direction: d > 0n ? 'credit' as const : 'debit' as const, amountMinor: d < 0n ? -d : d, date: now.toISOString().slice(0, 10), references: [run.what], counterparty: '' };
  await trx.insertInto('reconciliation_exceptions').values({
    id: newId('reconciliationException', now.getTime()), key: `closing:${run.id}`, run_id: run.id, type: 'balance_difference', account: run.account, rail: run.rail,
    environment: run.environment, currency: run.currency, amount_minor: line.amountMinor.toString(), statement_line: lineJson(line), expected_line: null, created_at: now, updated_at: now,
  }).onConflict((oc) => oc.column('key').doNothing()).execute();
}
