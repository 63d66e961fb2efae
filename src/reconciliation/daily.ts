import { sql } from 'kysely';
import { z } from 'zod';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import { recordEvents } from '../domain/events';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { newId } from '../ids';
import { STATEMENT_FILE_DETAIL } from '../providers/bank-files/statements';
import { reconcileChainHoldings, type HoldingsDay, type HoldingsReader } from './chain-holdings';
import { reconcileChainNative, type NativeReader } from './chain-native';
import { reconcileChainPayouts, type ChainDay, type MovementReader } from './chain-runs';
import type { Tolerances } from './matching';
import { reconcileStatementFile } from './runs';

// The daily reconciliation (docs/RECONCILIATION.md, "The daily run"): at the hour the bank's
// statements are due, every statement received since the last run is reconciled, and each account
// whose statement never came, or whose books and statement disagree, is a break: an alarm on the
// workflow (search attribute ReconciliationBreak) and a `reconciliation.break` event to the
// platform's operators. Each run's report is kept, once per run key (a retried activity answers it again).

/** An account whose statement the bank sends each day. */
export interface StatementAccount { account: string; rail: 'ach' | 'sepa' }

export interface AccountDay {
  account: string;
  rail: string;
  /** The statement files reconciled for it in this run. */
  statements: string[];
  matched: number;
  exceptionsOpened: number;
  /** Exceptions of the account still open or under investigation, from any day. */
  exceptionsOpen: number;
  statementMissing: boolean;
  /** The last statement's closing balance less the books and what they explain, in minor units (a string: the report is JSON); null without one. */
  balanceDifferenceMinor?: string | null;
}

export interface DayReport {
  id: string;
  environment: Environment;
  since: string;
  ranAt: string;
  accounts: AccountDay[];
  /** Each chain whose payouts settled since the last run, checked on its node. */
  chains: ChainDay[];
  /** Each chain treasury's holdings of each currency, against the books. */
  holdings?: HoldingsDay[];
  /** `statement_missing:<account>`, `exceptions:<account>`, `closing_balance:<account>`, `chain_exceptions:<chain>`, `chain_balance:<chain>:<currency>`: empty on a clean day. */
  breaks: string[];
}

/** The breaks of a day: a statement that never came, exceptions opened by this run, a closing balance or holdings the books do not explain, on an account or a chain. */
export function breaksOf(accounts: AccountDay[], chains: ChainDay[] = [], holdings: HoldingsDay[] = []): string[] {
  return [
    ...accounts.flatMap((a) => [
      ...a.statementMissing ? [`statement_missing:${a.account}`] : [],
      ...a.exceptionsOpened > 0 ? [`exceptions:${a.account}`] : [],
      ...a.balanceDifferenceMinor && a.balanceDifferenceMinor !== '0' ? [`closing_balance:${a.account}`] : [],
    ]),
    ...chains.filter((c) => c.exceptionsOpened > 0).map((c) => `chain_exceptions:${c.chain}`),
    ...holdings.filter((h) => h.differenceMinor !== '0').map((h) => `chain_balance:${h.chain}:${h.currency}`),
  ];
}

/**
 * Reconciles every statement received since the environment's last daily run (the first: in the
 * last `firstLookbackMs`), and reports each expected account; recorded once under `runKey`.
 */
export async function reconcileDay(
  db: Db, cipher: DataCipher,
  opts: {
    runKey: string; environment: Environment; tolerances: Tolerances; accounts: StatementAccount[]; firstLookbackMs: number;
    /** The chains whose payouts are checked on their nodes, and how to read a transaction there. */
    chains?: { chains: string[]; movementsOf: MovementReader };
    /** The chains whose treasury holdings are compared with the books, each with its currencies, and how to read them. */
    holdings?: { holdings: { chain: string; currencies: string[] }[]; holdingsOf: HoldingsReader };
    /** The chains whose treasury's native asset is compared with what the platform's own transactions spent, and how to read it. */
    natives?: { natives: { chain: string; nativeAsset: string }[]; nativeOf: NativeReader };
  },
  now = new Date(),
): Promise<DayReport> {
  const done = await db.selectFrom('reconciliation_days').select('report').where('run_key', '=', opts.runKey).executeTakeFirst();
  if (done) return done.report as unknown as DayReport;
  const last = await db.selectFrom('reconciliation_days').select((eb) => eb.fn.max('created_at').as('at')).where('environment', '=', opts.environment).executeTakeFirst();
  const since = last?.at ?? new Date(now.getTime() - opts.firstLookbackMs);
  const files = await db.selectFrom('bank_files').select('id').where('direction', '=', 'inbound').where('detail', 'like', `${STATEMENT_FILE_DETAIL}%`)
    .where('created_at', '>', since).where('created_at', '<=', now).orderBy('created_at').orderBy('id').execute();
  const byAccount = new Map<string, AccountDay>(opts.accounts.map((a) => [a.account, emptyDay(a.account, a.rail)]));
  for (const file of files) {
    for (const outcome of await reconcileStatementFile(db, cipher, file.id, opts, now)) {
      const day = byAccount.get(outcome.account) ?? emptyDay(outcome.account, '');
      byAccount.set(outcome.account, day);
      day.statements.push(file.id);
      day.statementMissing = false;
      if (outcome.fresh) { day.matched += outcome.matched; day.exceptionsOpened += outcome.exceptions; }
      day.balanceDifferenceMinor = outcome.balanceDifferenceMinor?.toString() ?? null;
    }
  }
  const accounts = [...byAccount.values()];
  for (const day of accounts) day.exceptionsOpen = await openExceptionCount(db, opts.environment, day.account);
  const chains = opts.chains ? await reconcileChainPayouts(db, opts.chains, { runKey: opts.runKey, environment: opts.environment, since }, now) : [];
  const holdings = opts.holdings ? await reconcileChainHoldings(db, opts.holdings, { runKey: opts.runKey, environment: opts.environment }, now) : [];
  for (const n of opts.natives?.natives ?? []) {
    holdings.push(await reconcileChainNative(db, { ...n, read: opts.natives!.nativeOf }, { runKey: opts.runKey, environment: opts.environment }, now));
  }
  const report: DayReport = {
    id: newId('reconciliationDay', now.getTime()), environment: opts.environment, since: since.toISOString(), ranAt: now.toISOString(),
    accounts, chains, holdings, breaks: breaksOf(accounts, chains, holdings),
  };
  await db.insertInto('reconciliation_days').values({
    id: report.id, run_key: opts.runKey, environment: opts.environment, created_at: now, report: JSON.stringify(report), breaks: report.breaks.length,
  }).onConflict((oc) => oc.column('run_key').doNothing()).execute();
  return (await db.selectFrom('reconciliation_days').select('report').where('run_key', '=', opts.runKey).executeTakeFirstOrThrow()).report as unknown as DayReport;
}

const emptyDay = (account: string, rail: string): AccountDay =>
  ({ account, rail, statements: [], matched: 0, exceptionsOpened: 0, exceptionsOpen: 0, statementMissing: true, balanceDifferenceMinor: null });

async function openExceptionCount(db: Db, environment: Environment, account: string) {
  const row = await db.selectFrom('reconciliation_exceptions').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('environment', '=', environment).where('account', '=', account).where('status', '!=', 'resolved').executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The `reconciliation.break` event of a day's report, to every operators' developer account of the
 * environment (their webhooks deliver it); once per report.
 */
export async function announceBreak(db: Db, report: DayReport, now = new Date()): Promise<number> {
  const operators = await db.selectFrom('developers').select('id').where('operator', '=', true).execute();
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`reconciliation-break:${report.id}`}))`.execute(trx);
    let sent = 0;
    for (const dev of operators) {
      const tenant = { developerId: dev.id, environment: report.environment };
      const already = await trx.selectFrom('events').select('id').where('developer_id', '=', dev.id).where('environment', '=', report.environment)
        .where('type', '=', 'reconciliation.break').where('object_id', '=', report.id).executeTakeFirst();
      if (already) continue;
      await recordEvents(trx, tenant, [{ type: 'reconciliation.break', objectId: report.id, data: reportJson(report), at: now }]);
      sent += 1;
    }
    return sent;
  });
}

export const ReconciliationReportSchema = z.object({
  id: z.string().regex(/^rday_[0-9A-Za-z]+$/),
  object: z.literal('reconciliation_report'),
  environment: z.enum(['sandbox', 'production']),
  since: z.iso.datetime().describe('Statements received after this moment (the previous run) were reconciled'),
  ran_at: z.iso.datetime(),
  created_at: z.iso.datetime().describe('When the run made it: ran_at'),
  updated_at: z.iso.datetime().describe('A report never changes: its created_at'),
  breaks: z.array(z.string()).describe('statement_missing:<account>, exceptions:<account>, closing_balance:<account>, chain_exceptions:<chain>, chain_balance:<chain>:<currency>; empty on a clean day'),
  accounts: z.array(z.object({
    account: z.string(), rail: z.string(), statements: z.array(z.string()).describe('The statement files (bfile_…) reconciled'),
    matched: z.number().int(), exceptions_opened: z.number().int(), exceptions_open: z.number().int().describe('Still open or under investigation, from any day'),
    statement_missing: z.boolean(),
    closing_balance_difference: z.string().nullable().describe("The last statement's closing balance less the books' position and what they explain (docs/RECONCILIATION.md), in the account's currency: \"0.00\" when they agree; null without a statement"),
  })),
  chains: z.array(z.object({
    chain: z.string(), checked: z.number().int().describe('Payouts settled since the last run, each checked on the node'), exceptions_opened: z.number().int(),
  })).describe('Each chain whose payouts settled since the last run'),
  holdings: z.array(z.object({
    chain: z.string(), currency: z.string(), position: z.string().describe('The block (or slot) at which the node was read'),
    difference: z.string().describe("The treasury's holdings less the books' position and what they explain (docs/RECONCILIATION.md): zero when they agree"),
  })).describe("Each chain treasury's holdings of each token against the books, and of its native asset against what the platform's own transactions spent"),
}).meta({ id: 'ReconciliationReport' });

/** A day's report as the API and the event show it. */
export function reportJson(report: DayReport): z.infer<typeof ReconciliationReportSchema> {
  return {
    id: report.id, object: 'reconciliation_report', environment: report.environment, since: report.since, ran_at: report.ranAt,
    created_at: report.ranAt, updated_at: report.ranAt, breaks: report.breaks,
    accounts: report.accounts.map((a) => ({
      account: a.account, rail: a.rail, statements: a.statements, matched: a.matched, exceptions_opened: a.exceptionsOpened,
      exceptions_open: a.exceptionsOpen, statement_missing: a.statementMissing,
      closing_balance_difference: a.balanceDifferenceMinor == null ? null : formatAmount(BigInt(a.balanceDifferenceMinor), 2),
    })),
    // Reports made before the chain check have none.
    chains: (report.chains ?? []).map((c) => ({ chain: c.chain, checked: c.checked, exceptions_opened: c.exceptionsOpened })),
    // Reports made before the holdings check have none.
    holdings: (report.holdings ?? []).map((h) => ({
      chain: h.chain, currency: h.currency, position: h.position, difference: formatAmount(BigInt(h.differenceMinor), ASSET_SCALE[h.currency] ?? 2),
    })),
  };
}
