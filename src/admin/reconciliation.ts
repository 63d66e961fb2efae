import type { Config } from '../config';
import { createDataCipher } from '../crypto';
import type { Db } from '../db';
import { formatAmount } from '../domain/money';
import { bankFileEnvironment } from '../providers/bank-files/settings';
import { reconcileStatementFile } from '../reconciliation/runs';

// Operators' reconciliation commands (`npm run cli -- reconciliation …`, docs/RECONCILIATION.md):
// a statement the bank sent reconciled (once), and the exceptions still open.

/**
 * Reconciles a statement file (bfile_…) of the environment the bank's files serve, with the
 * configured tolerances; one line per account. Again on the same file: what was recorded the first time.
 */
export async function runReconciliation(db: Db, config: Config, fileId: string): Promise<string[]> {
  const outcomes = await reconcileStatementFile(db, createDataCipher(config, { allowGenerated: false }), fileId, {
    environment: bankFileEnvironment(config) ?? 'production',
    tolerances: { shortfallMinor: config.RECONCILIATION_CREDIT_SHORTFALL, days: config.RECONCILIATION_DAYS },
  });
  if (outcomes.length === 0) return [`${fileId}: not a statement (BAI2 or camt.053); nothing to reconcile`];
  return outcomes.map((o) => `${o.runId}  account ${o.account}: ${o.matched} matched, ${o.exceptions} exceptions${o.fresh ? '' : ' (reconciled before; nothing recorded again)'}`);
}

/** The open exceptions, oldest first: id, age, type, account, amount, what each side says. */
export async function openExceptions(db: Db, now = new Date()): Promise<string[]> {
  const rows = await db.selectFrom('reconciliation_exceptions').selectAll().where('status', '=', 'open').orderBy('created_at').orderBy('id').limit(500).execute();
  return rows.map((e) => {
    const side = (line: unknown) => {
      const l = line as { references?: string[]; date?: string; direction?: string } | null;
      return l ? `${l.direction} ${l.date} ${(l.references ?? []).join(',')}` : '-';
    };
    const hours = Math.floor((now.getTime() - e.created_at.getTime()) / 3_600_000);
    return [e.id, `${hours}h`, e.type, e.account, formatAmount(BigInt(e.amount_minor), 2), `statement: ${side(e.statement_line)}`, `books: ${side(e.expected_line)}`].join('  ');
  });
}
