import type { Config } from '../src/config';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { bankFileEnvironment, bankFileRails } from '../src/providers/bank-files/settings';
import { announceBreak, reconcileDay, type DayReport, type StatementAccount } from '../src/reconciliation/daily';

/** The accounts whose statement the bank sends each day: the US collection account (BAI2) and the SEPA account (camt.053), where their rails run on files. */
export function statementAccounts(config: Config): StatementAccount[] {
  const environment = bankFileEnvironment(config);
  if (!environment) return [];
  const rails: string[] = bankFileRails(config, environment);
  return [
    ...rails.some((r) => r.startsWith('ach')) && config.ACH_COLLECTION_ACCOUNT ? [{ account: config.ACH_COLLECTION_ACCOUNT, rail: 'ach' as const }] : [],
    ...rails.includes('sepa') && config.SEPA_DEBTOR_IBAN ? [{ account: config.SEPA_DEBTOR_IBAN, rail: 'sepa' as const }] : [],
  ];
}

/** The daily reconciliation's activities (docs/RECONCILIATION.md, "The daily run"). */
export function createReconciliationActivities(deps: { db: Db; cipher: DataCipher; config: Config }) {
  const environment = bankFileEnvironment(deps.config) ?? 'production';
  return {
    /** Every statement received since the last run reconciled; the day's report, recorded once per run key. */
    async reconcileStatementsReceived(input: { runKey: string }): Promise<Pick<DayReport, 'id' | 'breaks'>> {
      const report = await reconcileDay(deps.db, deps.cipher, {
        runKey: input.runKey, environment, accounts: statementAccounts(deps.config), firstLookbackMs: 86_400_000,
        tolerances: { shortfallMinor: deps.config.RECONCILIATION_CREDIT_SHORTFALL, days: deps.config.RECONCILIATION_DAYS },
      });
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
