import type { ColumnType, Generated } from 'kysely';
import type { Environment, Numeric } from './column-types';

// The reconciliation's tables (migrations 0037 to 0041, src/reconciliation/, docs/RECONCILIATION.md).

/** A statement of one of our accounts reconciled, a chain's payouts checked against its node, or a chain treasury's holdings of one currency. */
export interface ReconciliationRunsTable {
  id: string;
  /** Null for a chain's run. */
  statement_file_id: string | null;
  kind: Generated<'statement' | 'chain' | 'holdings'>;
  /** A chain's or holdings run: the daily run that made it (once per daily run and chain, or chain and currency). */
  day_run_key: string | null;
  account: string;
  rail: string;
  environment: Generated<Environment>;
  period_from: Date;
  period_to: Date;
  statement_closing_minor: Numeric | null;
  /** The books' position of the account when the run read the statement (docs/RECONCILIATION.md, "The closing balance"). */
  books_minor: Numeric | null;
  /** What the exceptions, the payments not yet at the bank and the micro-deposits explain of the difference. */
  explained_minor: Numeric | null;
  /** Closing balance less the books' position less what is explained: 0 when they agree. */
  balance_difference_minor: Numeric | null;
  /** Credits this run matched short within tolerance, in sum. */
  shortfall_minor: ColumnType<string, string | bigint | undefined, string | bigint>;
  /** A holdings run: the block (or slot) at which the node's holdings were read. */
  chain_position: ColumnType<string | null, string | null | undefined, string | null>;
  /** A native holdings run: what all the treasury's own transactions cost it, up to that block. */
  spent_minor: ColumnType<string | null, string | null | undefined, string | null>;
  matched: number;
  exceptions_opened: number;
  created_at: Date;
}

export interface ReconciliationMatchesTable {
  statement_line_id: string;
  expected_id: string;
  run_id: string;
  matched_by: string;
  difference_minor: Numeric;
  created_at: Date;
}

export type ReconciliationExceptionStatus = 'open' | 'investigating' | 'resolved';

export interface ReconciliationExceptionsTable {
  id: string;
  run_id: string;
  type: string;
  key: string;
  account: string;
  rail: string;
  environment: Generated<Environment>;
  amount_minor: Numeric;
  /** A chain exception's currency; null for a bank account's (its rail's). */
  currency: string | null;
  statement_line: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  expected_line: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  status: Generated<ReconciliationExceptionStatus>;
  resolution: string | null;
  reason: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** An operator's action on an exception; append-only (a trigger refuses updates and deletes). */
export interface ReconciliationResolutionsTable {
  id: string;
  exception_id: string;
  action: 'match' | 'write_off' | 'investigate';
  operator: string;
  reason: string;
  counterpart_exception_id: string | null;
  ledger_transaction_id: string | null;
  request_id: string | null;
  created_at: Date;
}

/** A daily run's report (src/reconciliation/daily.ts). */
export interface ReconciliationDaysTable {
  id: string;
  run_key: string;
  environment: Environment;
  created_at: Date;
  report: ColumnType<Record<string, unknown>, string, string>;
  breaks: number;
}

/** What one of a chain treasury's own transactions cost it in the native asset, counted once (migration 0041). */
export interface ReconciliationChainCostsTable {
  chain: string;
  tx_hash: string;
  cost_minor: Numeric;
  run_id: string;
  created_at: Date;
}

export interface ReconciliationTables {
  reconciliation_days: ReconciliationDaysTable;
  reconciliation_runs: ReconciliationRunsTable;
  reconciliation_matches: ReconciliationMatchesTable;
  reconciliation_exceptions: ReconciliationExceptionsTable;
  reconciliation_resolutions: ReconciliationResolutionsTable;
  reconciliation_chain_costs: ReconciliationChainCostsTable;
}
