import type { Config } from '../config';
import { createDataCipher } from '../crypto';
import type { Db } from '../db';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { reconciliationSettings } from '../providers/bank-files/settings';
import type { DayReport } from '../reconciliation/daily';
import { exceptionCurrency, resolveException, type ResolutionAction } from '../reconciliation/exceptions';
import { storedLine } from '../reconciliation/matching';
import { reconcileStatementFile } from '../reconciliation/runs';

// Operators' reconciliation commands (`npm run cli -- reconciliation …`, docs/RECONCILIATION.md):
// a statement the bank sent reconciled (once), the exceptions still open, and an operator's
// resolution of one (the same core function as the API's).

const DECISIONS: Record<string, ResolutionAction> = { match: 'match', 'write-off': 'write_off', investigate: 'investigate' };

/** `reconciliation run|exceptions|resolve`: the lines to print. */
export async function reconciliationCommand(
  db: Db, config: Config, args: { action?: string; target?: string; operator: string; decision?: string; reason?: string; counterpart?: string },
): Promise<string[]> {
  if (args.action === 'run') return runReconciliation(db, config, args.target ?? '');
  if (args.action === 'exceptions') return openExceptions(db);
  if (args.action === 'report') return reportCsv(db, args.target);
  if (args.action !== 'resolve') throw new Error(`unknown command 'reconciliation ${args.action ?? ''}': run, exceptions, resolve or report`);
  const action = DECISIONS[args.decision ?? ''];
  if (!args.target) throw new Error('reconciliation resolve needs an exception id (rexc_…)');
  if (!action) throw new Error('--decision must be match, write-off or investigate');
  if (!args.reason || args.reason.trim().length < 3) throw new Error('--reason is required: it is kept with the resolution');
  const row = await db.transaction().execute((trx) => resolveException(trx, {
    environment: reconciliationSettings(config).environment, exceptionId: args.target!, action, reason: args.reason!,
    operator: args.operator, counterpartId: args.counterpart,
  }));
  return [`${row.id}: ${row.status}${row.resolution ? ` (${row.resolution})` : ''} by ${args.operator}`];
}

/**
 * Reconciles a statement file (bfile_…) of the environment the bank's files serve, with the
 * configured tolerances; one line per account. Again on the same file: what was recorded the first time.
 */
export async function runReconciliation(db: Db, config: Config, fileId: string): Promise<string[]> {
  const outcomes = await reconcileStatementFile(db, createDataCipher(config, { allowGenerated: false }), fileId, reconciliationSettings(config));
  if (outcomes.length === 0) return [`${fileId}: not a statement (BAI2 or camt.053); nothing to reconcile`];
  return outcomes.map((o) => `${o.runId}  account ${o.account}: ${o.matched} matched, ${o.exceptions} exceptions, ${closingWords(o.balanceDifferenceMinor)}`
    + `${o.fresh ? '' : ' (reconciled before; nothing recorded again)'}`);
}

/** What a run found of the closing balance, in words (minor units of the account's currency, 2 decimals). */
const closingWords = (difference: bigint | null) => (difference === null ? 'no closing balance given'
  : difference === 0n ? 'closing balance agrees with the books' : `closing balance ${formatAmount(difference, 2)} from the books`);

/** The open exceptions, oldest first: id, age, type, account, amount, what each side says. */
export async function openExceptions(db: Db, now = new Date()): Promise<string[]> {
  const rows = await db.selectFrom('reconciliation_exceptions').selectAll().where('status', '=', 'open').orderBy('created_at').orderBy('id').limit(500).execute();
  return rows.map((e) => {
    const side = (json: unknown) => {
      const l = storedLine(json);
      return l ? `${l.direction} ${l.date} ${l.references.join(',')}` : '-';
    };
    const hours = Math.floor((now.getTime() - e.created_at.getTime()) / 3_600_000);
    return [e.id, `${hours}h`, e.type, e.account, `${formatAmount(BigInt(e.amount_minor), ASSET_SCALE[exceptionCurrency(e)] ?? 2)} ${exceptionCurrency(e)}`, `statement: ${side(e.statement_line)}`, `books: ${side(e.expected_line)}`].join('  ');
  });
}

/** A daily run's report as CSV, one row per account and per chain checked: the one named, or the latest. */
async function reportCsv(db: Db, id?: string): Promise<string[]> {
  let q = db.selectFrom('reconciliation_days').select('report').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1);
  if (id) q = q.where('id', '=', id);
  const row = await q.executeTakeFirst();
  if (!row) throw new Error(id ? `no reconciliation report ${id}` : 'no reconciliation report yet');
  const report = row.report as unknown as DayReport;
  const cell = (v: unknown) => (/[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  return [
    'report,ran_at,account,rail,statements,matched,exceptions_opened,exceptions_open,statement_missing,closing_balance_difference',
    ...report.accounts.map((a) => [report.id, report.ranAt, a.account, a.rail, a.statements.join(' '), a.matched, a.exceptionsOpened, a.exceptionsOpen, a.statementMissing,
      a.balanceDifferenceMinor == null ? '' : formatAmount(BigInt(a.balanceDifferenceMinor), 2)].map(cell).join(',')),
    // A chain's row: its payouts checked on the node stand where an account's matched lines do.
    ...(report.chains ?? []).map((c) => [report.id, report.ranAt, c.chain, c.chain, '', c.checked, c.exceptionsOpened, '', false, ''].map(cell).join(',')),
  ];
}
