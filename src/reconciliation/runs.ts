import { sql } from 'kysely';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import { newId } from '../ids';
import { isStatementFile, readStatementFile } from '../providers/bank-files/statements';
import { recordClosingBalance } from './closing-balance';
import { expectedBankLines } from './expected-lines';
import { lineJson, matchStatement, storedLine, type ReconciliationException, type StatementLine, type Tolerances } from './matching';
import { bai2Lines, camt053Lines } from './statement-lines';

// A statement the bank sent, reconciled once (docs/RECONCILIATION.md): its lines against what the
// books expect for the period since the account's last statement, the matches and the exceptions
// recorded in one transaction, each keyed by its line, so a statement delivered twice, or a run cut
// short by a crash and run again, records nothing twice.

/** One account's statement as read from a file: its lines and closing balance. */
export interface AccountStatement {
  account: string;
  rail: 'ach' | 'sepa';
  lines: StatementLine[];
  closingMinor: bigint | null;
}

/** The statements a BAI2 file or a camt.053 holds, one per account, as lines; empty for any other file. */
export function statementsOf(name: string, text: string): AccountStatement[] {
  if (!isStatementFile(text)) return [];
  return readStatementFile(text).map((st) => ({
    account: st.account, rail: st.format === 'bai2' ? 'ach' : 'sepa', closingMinor: st.closingMinor,
    lines: st.format === 'bai2' ? bai2Lines(st.file, name, st.account) : camt053Lines(st.statement),
  }));
}

export interface RunOutcome {
  runId: string;
  account: string;
  matched: number;
  exceptions: number;
  /** False when this statement had been reconciled before: nothing was recorded again. */
  fresh: boolean;
  /** The closing balance less the books and what they explain (null: the statement gave no closing balance). */
  balanceDifferenceMinor: bigint | null;
}

/** Reconciles every account statement of an inbound bank file (a statement), once. */
export async function reconcileStatementFile(
  db: Db, cipher: DataCipher, fileId: string, opts: { environment: Environment; tolerances: Tolerances }, now = new Date(),
): Promise<RunOutcome[]> {
  const file = await db.selectFrom('bank_files').select(['id', 'name', 'contents_encrypted', 'created_at'])
    .where('id', '=', fileId).where('direction', '=', 'inbound').executeTakeFirstOrThrow();
  const outcomes: RunOutcome[] = [];
  for (const statement of statementsOf(file.name, cipher.decryptText(file.contents_encrypted))) {
    outcomes.push(await reconcileAccount(db, cipher, { id: file.id, receivedAt: file.created_at }, statement, opts, now));
  }
  return outcomes;
}

async function reconcileAccount(
  db: Db, cipher: DataCipher, file: { id: string; receivedAt: Date }, statement: AccountStatement,
  opts: { environment: Environment; tolerances: Tolerances }, now: Date,
): Promise<RunOutcome> {
  return db.transaction().execute(async (trx) => {
    // One run per account at a time: the period is the time since the account's last statement.
    await sql`select pg_advisory_xact_lock(hashtext(${`reconciliation:${statement.account}`}))`.execute(trx);
    const done = await trx.selectFrom('reconciliation_runs').select(['id', 'matched', 'exceptions_opened', 'balance_difference_minor'])
      .where('statement_file_id', '=', file.id).where('account', '=', statement.account).executeTakeFirst();
    if (done) return { runId: done.id, account: statement.account, matched: done.matched, exceptions: done.exceptions_opened, fresh: false, balanceDifferenceMinor: done.balance_difference_minor === null ? null : BigInt(done.balance_difference_minor) };
    const last = await trx.selectFrom('reconciliation_runs').select((eb) => eb.fn.max('period_to').as('to'))
      .where('account', '=', statement.account).executeTakeFirst();
    const from = last?.to ?? new Date(0);
    // What an earlier statement lacked may come on this one (a bank that books a day later): still expected.
    const owed = await trx.selectFrom('reconciliation_exceptions').select(['id', 'expected_line'])
      .where('account', '=', statement.account).where('type', '=', 'missing_from_statement').where('status', '=', 'open').execute();
    const owedLines = owed.map((o) => storedLine(o.expected_line)!);
    const expected = [...owedLines, ...await expectedBankLines(trx, cipher, { rail: statement.rail, environment: opts.environment, from, to: file.receivedAt })];
    const { matches, exceptions } = matchStatement(statement.lines, expected, opts.tolerances);
    const matchedIds = new Set(matches.map((m) => m.expectedId));
    const settled = owed.filter((_o, i) => matchedIds.has(owedLines[i]!.id)).map((o) => o.id);
    if (settled.length > 0) {
      await trx.updateTable('reconciliation_exceptions').set({ status: 'resolved', resolution: 'matched', reason: 'on a later statement', resolved_by: 'reconciliation', resolved_at: now, updated_at: now })
        .where('id', 'in', settled).execute();
    }
    const runId = newId('reconciliationRun', now.getTime());
    await trx.insertInto('reconciliation_runs').values({
      id: runId, statement_file_id: file.id, account: statement.account, rail: statement.rail, environment: opts.environment, period_from: from, period_to: file.receivedAt,
      statement_closing_minor: statement.closingMinor, matched: matches.length, exceptions_opened: exceptions.length, created_at: now,
      shortfall_minor: matches.reduce((s, m) => s + m.differenceMinor, 0n).toString(),
    }).execute();
    // In slices: a statement of 100,000 lines is more rows than one statement's 65,535 parameters hold.
    for (const slice of slices(matches, ROWS_PER_INSERT)) {
      await trx.insertInto('reconciliation_matches').values(slice.map((m) => ({
        statement_line_id: m.lineId, expected_id: m.expectedId, run_id: runId, matched_by: m.by, difference_minor: m.differenceMinor, created_at: now,
      }))).onConflict((oc) => oc.doNothing()).execute();
    }
    for (const slice of slices(exceptions, ROWS_PER_INSERT)) {
      await trx.insertInto('reconciliation_exceptions').values(slice.map((e) => exceptionRow(e, runId, statement, opts.environment, now)))
        .onConflict((oc) => oc.column('key').doNothing()).execute();
    }
    const balance = statement.closingMinor === null ? null : await recordClosingBalance(trx, cipher, {
      id: runId, account: statement.account, rail: statement.rail, environment: opts.environment, cutoff: file.receivedAt, closingMinor: statement.closingMinor,
    }, now);
    return { runId, account: statement.account, matched: matches.length, exceptions: exceptions.length, fresh: true, balanceDifferenceMinor: balance?.differenceMinor ?? null };
  });
}

const ROWS_PER_INSERT = 2_000;
const slices = <T>(rows: T[], size: number) => Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => rows.slice(i * size, (i + 1) * size));

function exceptionRow(e: ReconciliationException, runId: string, statement: AccountStatement, environment: Environment, now: Date) {
  const base = { id: newId('reconciliationException', now.getTime()), run_id: runId, type: e.type, account: statement.account, rail: statement.rail, environment, created_at: now, updated_at: now };
  if (e.type === 'missing_from_statement') return { ...base, key: `expected:${e.expected.id}`, amount_minor: e.expected.amountMinor, statement_line: null, expected_line: lineJson(e.expected) };
  if (e.type === 'unexpected_on_statement') return { ...base, key: `line:${e.line.id}`, amount_minor: e.line.amountMinor, statement_line: lineJson(e.line), expected_line: null };
  return { ...base, key: `line:${e.line.id}`, amount_minor: e.differenceMinor, statement_line: lineJson(e.line), expected_line: lineJson(e.expected) };
}
