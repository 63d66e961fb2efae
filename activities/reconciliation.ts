import type { Config } from '../src/config';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { reconciliationSettings } from '../src/providers/bank-files/settings';
import { announceBreak, reconcileDay, type DayReport } from '../src/reconciliation/daily';

/** The daily reconciliation's activities (docs/RECONCILIATION.md, "The daily run"). */
export function createReconciliationActivities(deps: { db: Db; cipher: DataCipher; config: Config }) {
  const settings = reconciliationSettings(deps.config);
  return {
    /** Every statement received since the last run reconciled; the day's report, recorded once per run key. */
    async reconcileStatementsReceived(input: { runKey: string }): Promise<Pick<DayReport, 'id' | 'breaks'>> {
      const report = await reconcileDay(deps.db, deps.cipher, { ...settings, runKey: input.runKey, firstLookbackMs: 86_400_000 });
      return { id: report.id, breaks: report.breaks };
    },
    /** The `reconciliation.break` event to the operators, once per report. */
    async announceReconciliationBreak(input: { reportId: string }): Promise<number> {
      const row = await deps.db.selectFrom('reconciliation_days').select('report').where('id', '=', input.reportId).executeTakeFirstOrThrow();
      return announceBreak(deps.db, row.report as unknown as DayReport);
    },
  };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
