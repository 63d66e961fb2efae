import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import { formatAmount } from '../domain/money';
import { reconcileStatementFile } from '../reconciliation/runs';
import type { Tolerances } from '../reconciliation/matching';

// Operators' reconciliation commands (`npm run cli -- reconciliation …`, docs/RECONCILIATION.md):
// a statement the bank sent reconciled (once), and the exceptions still open.

/** Reconciles a statement file (bfile_…); one line per account. Again on the same file: what was recorded the first time. */
export async function runReconciliation(db: Db, cipher: DataCipher, fileId: string, opts: { environment: Environment; tolerances: Tolerances }): Promise<string[]> {
  const outcomes = await reconcileStatementFile(db, cipher, fileId, opts);
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
