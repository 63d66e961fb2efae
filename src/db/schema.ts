import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment, Numeric } from './column-types';
import type { ReconciliationTables } from './schema-reconciliation';
import type { BankFileTables } from './schema-bank-files';
import type { ChainTables } from './schema-chains';
import type { WalletTables } from './schema-wallets';
import type { RouteTables } from './schema-routes';
import type { CustomerTables } from './schema-customers';
import type { SanctionsTables } from './schema-sanctions';
import type { LedgerTables } from './schema-ledger';
import type { WebhookTables } from './schema-webhooks';

export type { Environment, Numeric } from './column-types';
export type * from './schema-bank-files';
export type * from './schema-chains';
export type * from './schema-wallets';
export type * from './schema-routes';
export type * from './schema-customers';
export type * from './schema-sanctions';
export type * from './schema-ledger';
export type * from './schema-webhooks';

// Table types for kysely: developers, keys, events, transfers, payments and what the API shares;
// the customers', sanctions', ledger's, webhooks', bank files', chains', wallets', routes' and
// reconciliation's in schema-*.ts beside this file (re-exported here).

export interface DevelopersTable {
  id: string;
  name: string;
  /** Custom limits for keys on the enterprise plan. */
  rate_limit_per_second: number | null;
  daily_quota: number | null;
  /** The platform's operators: its secret keys also reach the operator routes (/v0/reconciliation/…). */
  operator: Generated<boolean>;
  /** Browser origins its publishable keys may be used from; null: any in the sandbox, none in live. */
  allowed_origins: ColumnType<string[] | null, string | null, string | null>;
  created_at: Date;
}

export interface ApiKeysTable {
  id: string;
  developer_id: string;
  environment: Environment;
  kind: 'secret' | 'publishable';
  plan: 'sandbox' | 'production' | 'enterprise';
  /** null: unrestricted. */
  permissions: string[] | null;
  key_hash: string;
  /** First characters of the key, to recognise it in listings; never enough to use it. */
  key_hint: string;
  created_at: Date;
  revoked_at: Date | null;
}

export interface EventsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  type: string;
  object_id: string;
  data: ColumnType<Record<string, unknown>, string, string>;
  previous_attributes: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Date;
}

export interface IdempotencyKeysTable {
  developer_id: string;
  environment: Environment;
  key: string;
  method: string;
  path: string;
  body_hash: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: ColumnType<unknown, string | null, string | null>;
  locked_at: Date;
  created_at: Date;
  seq: Generated<number>;
}

export interface ExternalAccountsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string;
  type: 'us_bank_account' | 'international_bank_account' | 'mx_bank_account' | 'crypto_address';
  status: 'pending_verification' | 'verified' | 'verification_failed' | 'active' | 'deleted';
  account_name: string | null;
  account_type: string | null;
  routing_number: string | null;
  bank_name: string | null;
  bank_country: string | null;
  bic: string | null;
  chain: string | null;
  address: string | null;
  label: string | null;
  number_encrypted: string | null;
  last4: string | null;
  fingerprint: string;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface RailPaymentsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  rail: string;
  direction: 'credit' | 'debit';
  amount_minor: number;
  currency: string;
  external_account_id: string | null;
  purpose: string;
  idempotency_key: string;
  submitted_at: Date;
  settles_at: Date;
  created_at: Date;
  reference: string | null;
  outcome: Generated<'settle' | 'reject' | 'return'>;
  outcome_code: string | null;
  returned_at: Date | null;
}

export type TransferState =
  | 'awaiting_funds' | 'funds_received' | 'in_review' | 'payment_submitted' | 'payment_processed'
  | 'canceled' | 'undeliverable' | 'returned' | 'refunded';

/** An operator's decision on a held transfer; `operator` stays internal (not in API answers). */
export interface ReviewDecision {
  decision: 'approve' | 'reject';
  note: string | null;
  operator: string;
  decided_at: string;
}

/**
 * Live transfers (funded, not canceled or refunded) summed per customer and per payment route, by
 * source currency and UTC hour of creation, kept by database triggers on transfers (migration 0033):
 * what the review's 24-hour limits read.
 */
export interface TransferVolumesTable {
  owner_type: 'customer' | 'route';
  owner_id: string;
  currency: string;
  hour: Date;
  amount_minor: Numeric;
}

export interface TransfersTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string;
  state: TransferState;
  state_reason: string | null;
  client_reference_id: string | null;
  amount_minor: Numeric;
  developer_fee_minor: Numeric;
  source_rail: string;
  source_currency: string;
  source_from_address: string | null;
  /** The wallet that signs the deposit (migration 0021). */
  source_wallet_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The wallet paid at its address (migration 0021). */
  destination_wallet_id: ColumnType<string | null, string | null | undefined, string | null>;
  source_account_id: string | null;
  destination_rail: string;
  destination_currency: string;
  destination_external_account_id: string | null;
  /** The platform account credited (migration 0022). */
  destination_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  destination_to_address: string | null;
  swift_charges: string | null;
  receipt: ColumnType<Record<string, string | null>, string, string>;
  deposit_instructions: ColumnType<Record<string, string>, string, string>;
  deposit_reference: string;
  deposit_address: string | null;
  /** HD index of the deposit address (chain sources; null for transfers made before sweeps existed). */
  deposit_index: ColumnType<string | null, string | null | undefined, string | null>;
  source_position: string | null;
  /** How far the stray-deposit scan has read the deposit address (after the transfer stopped watching it). */
  stray_scan_position: ColumnType<string | null, string | null | undefined, string | null>;
  return_code: string | null;
  review_reasons: ColumnType<string[] | null, string | null, string | null>;
  review_decision: ColumnType<ReviewDecision | null, string | null, string | null>;
  /** The standing route whose deposit this transfer carries (migration 0030). */
  route_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
}

/** An operator's release of a held stray-deposit return (src/admin/stray-deposits.ts). */
export interface OperatorRelease {
  operator: string;
  note: string | null;
  released_at: string;
  /** Why it was held, and where it was to go. */
  held_reason: string | null;
  held_to_address: string | null;
  /** A return that was sent and reverted on chain: its transaction, before the release signed a new one. */
  reverted_tx_hash?: string;
}

export type PaymentKind = 'deposit' | 'payout' | 'return' | 'refund' | 'deposit_return';
export type PaymentStatus = 'pending' | 'submitted' | 'settled' | 'failed' | 'returned' | 'held';

export interface PaymentsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  transfer_id: string;
  kind: PaymentKind;
  rail: string;
  currency: string;
  amount_minor: Numeric;
  status: PaymentStatus;
  external_account_id: string | null;
  from_address: string | null;
  to_address: string | null;
  provider_payment_id: string | null;
  tx_hash: string | null;
  signed_transaction: string | null;
  replaced_tx_hashes: ColumnType<string[] | null, string | null, string | null>;
  network_fee: string | null;
  return_code: string | null;
  failure_reason: string | null;
  attempts: Generated<number>;
  idempotency_key: string;
  settles_at: Date | null;
  /** Each operator release of a held stray-deposit return, oldest first. */
  operator_releases: ColumnType<OperatorRelease[] | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
}

/** An event a fiat-rail provider sent to its webhook (migration 0015): handled once, kept with its outcome. */
export interface RailEventsTable {
  id: string;
  type: string;
  provider_payment_id: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  /** What came of it (`deposit_received`, `unmatched`, …); null until handled. */
  outcome: string | null;
  transfer_id: string | null;
  received_at: Date;
  handled_at: Date | null;
  /** An operator's resolution of an event that needed one (migration 0016). */
  resolved_by: string | null;
  resolved_note: string | null;
  resolved_at: Date | null;
  /** The sender's name on a deposit, when the provider gives it (DataCipher; migration 0017). */
  sender_encrypted: string | null;
}

export interface Database extends ReconciliationTables, BankFileTables, ChainTables, WalletTables, RouteTables, CustomerTables, SanctionsTables, LedgerTables, WebhookTables {
  developers: DevelopersTable;
  api_keys: ApiKeysTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  external_accounts: ExternalAccountsTable;
  rail_payments: RailPaymentsTable;
  transfers: TransfersTable;
  transfer_volumes: TransferVolumesTable;
  payments: PaymentsTable;
  rail_events: RailEventsTable;
}

export type TransferRow = Selectable<TransfersTable>;
export type PaymentRow = Selectable<PaymentsTable>;

export type ExternalAccountRow = Selectable<ExternalAccountsTable>;

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type EventRow = Selectable<EventsTable>;

