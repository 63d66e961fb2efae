import { Context } from '@temporalio/activity';
import type { ChainAdapters } from '../src/chains';
import { ChainUnavailableError } from '../src/chains/chain-adapter';
import { RAILS, type ChainRail } from '../src/domain/rails';
import type { HoldingsReader } from '../src/reconciliation/chain-holdings';
import type { NativeReader } from '../src/reconciliation/chain-native';
import type { Config } from '../src/config';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { reconciliationSettings } from '../src/providers/bank-files/settings';
import { announceBreak, reconcileDay, type DayReport } from '../src/reconciliation/daily';

const HEARTBEAT_MS = 2_000;

/** The daily reconciliation's activities (docs/RECONCILIATION.md, "The daily run"). */
export function createReconciliationActivities(deps: { db: Db; cipher: DataCipher; config: Config; chains: ChainAdapters }) {
  const settings = reconciliationSettings(deps.config);
  // The chains on nodes (a simulator has no movements to read).
  const chains = {
    chains: Object.values(deps.chains).filter((a) => a.movementsOf).map((a) => a.chain),
    movementsOf: (chain: string, txHash: string) => deps.chains[chain as keyof ChainAdapters].movementsOf!(txHash),
  };
  const holdingsOf: HoldingsReader = (chain, q) => deps.chains[chain as keyof ChainAdapters].treasuryHoldings!(q);
  const nativeOf: NativeReader = (chain, txHashes) => deps.chains[chain as keyof ChainAdapters].treasuryNative!(txHashes);
  return {
    /** Every statement received since the last run reconciled; the day's report, recorded once per run key. */
    async reconcileStatementsReceived(input: { runKey: string }): Promise<Pick<DayReport, 'id' | 'breaks'>> {
      // A statement is reconciled in one transaction that may take a while: the heartbeat says the
      // worker is alive, so an attempt lost with a crashed worker is tried again within seconds.
      const context = Context.current();
      const beating = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      try {
        const holdings = { holdings: await treasuryCurrencies(deps.chains), holdingsOf };
        const natives = { natives: Object.values(deps.chains).filter((a) => a.treasuryNative).map((a) => ({ chain: a.chain, nativeAsset: a.nativeAsset })), nativeOf };
        const report = await reconcileDay(deps.db, deps.cipher, { ...settings, chains, holdings, natives, runKey: input.runKey, firstLookbackMs: 86_400_000 });
        return { id: report.id, breaks: report.breaks };
      } finally {
        clearInterval(beating);
      }
    },
    /** The `reconciliation.break` event to the operators, once per report. */
    async announceReconciliationBreak(input: { reportId: string }): Promise<number> {
      const row = await deps.db.selectFrom('reconciliation_days').select('report').where('id', '=', input.reportId).executeTakeFirstOrThrow();
      return announceBreak(deps.db, row.report as unknown as DayReport);
    },
  };
}

/** The chains whose treasuries are read on a node, each with the tokens set up there. */
async function treasuryCurrencies(chains: ChainAdapters): Promise<{ chain: string; currencies: string[] }[]> {
  const found: { chain: string; currencies: string[] }[] = [];
  for (const adapter of Object.values(chains)) {
    if (!adapter.treasuryHoldings) continue;
    const currencies: string[] = [];
    for (const currency of RAILS[adapter.chain as ChainRail].currencies) {
      try {
        await adapter.checkCurrency(currency);
        currencies.push(currency);
      } catch (err) {
        if (!(err instanceof ChainUnavailableError)) throw err;
      }
    }
    if (currencies.length > 0) found.push({ chain: adapter.chain, currencies });
  }
  return found;
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
