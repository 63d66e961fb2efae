import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment } from './column-types';

// The double-entry ledger and platform accounts (src/ledger/, src/accounts/, docs/LEDGER.md, docs/ACCOUNTS.md).

export type LedgerPurpose =
  | 'customer_funds' | 'rail_clearing' | 'chain_treasury' | 'platform_fees' | 'developer_fees' | 'fx_conversion' | 'unapplied_deposits' | 'account_reserved'
  | 'reconciliation_suspense';

export interface LedgerAccountsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  owner_type: 'customer' | 'developer' | 'platform' | 'account';
  owner_id: string;
  purpose: LedgerPurpose;
  currency: string;
  allow_negative: boolean;
  /** numeric(78,0): read as a string, handled as bigint. */
  balance_minor: ColumnType<string, string | undefined, string>;
  created_at: Date;
}

export interface LedgerTransactionsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  idempotency_key: string;
  description: string;
  reference_id: string | null;
  created_at: Date;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  transaction_id: string;
  account_id: string;
  currency: string;
  amount_minor: ColumnType<string, string, never>;
  created_at: Date;
}

/** A customer's platform account (migration 0022): its balance is in the ledger. */
export interface PlatformAccountsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string;
  currency: string;
  status: 'active';
  created_at: Date;
  updated_at: Date;
}

export type PlatformAccountRow = Selectable<PlatformAccountsTable>;

export interface LedgerTables {
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  platform_accounts: PlatformAccountsTable;
}
