import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { Environment, Numeric } from './column-types';
import type { ReconciliationTables } from './schema-reconciliation';

export type { Environment, Numeric } from './column-types';

// Table types for kysely; the reconciliation's in schema-reconciliation.ts.

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

export interface Address {
  line1: string;
  line2?: string;
  city: string;
  state?: string;
  postal_code?: string;
  country: string;
}

export interface CustomersTable {
  id: string;
  developer_id: string;
  environment: Environment;
  type: 'individual' | 'business';
  email: string;
  first_name: string | null;
  last_name: string | null;
  business_name: string | null;
  phone: string | null;
  date_of_birth: string | null;
  address: ColumnType<Address | null, string | null, string | null>;
  tax_id_encrypted: string | null;
  status: 'pending' | 'active' | 'suspended' | 'deleted';
  kyc_status: string;
  risk_rating: 'low' | 'medium' | 'high' | null;
  endorsements: string[];
  rejection_reasons: ColumnType<string[] | null, string | null, string | null>;
  incomplete_reasons: ColumnType<string[] | null, string | null, string | null>;
  review_reasons: ColumnType<string[] | null, string | null, string | null>;
  /** Who decided a manual review, what and when: kept for audit, not returned by the API. */
  kyc_decision: ColumnType<{ decision: 'approve' | 'reject'; reasons: string[] | null; operator: string; decided_at: string } | null, string | null, string | null>;
  kyc_link_token_hash: string | null;
  kyc_link_expires_at: Date | null;
  /** A compliance freeze while status is suspended (migration 0025); the operator is kept for audit, not returned. */
  suspension: ColumnType<CustomerSuspension | null, string | null | undefined, string | null>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface CustomerSuspension {
  reason: string;
  operator: string;
  suspended_at: string;
  /** The status a reactivation goes back to (KYC may have approved the customer meanwhile). */
  previous_status: 'pending' | 'active';
}

export interface KycSubmissionsTable {
  id: string;
  customer_id: string;
  developer_id: string;
  environment: Environment;
  document_type: string | null;
  document_front_encrypted: string | null;
  selfie_encrypted: string | null;
  beneficial_owners_encrypted: string | null;
  beneficial_owner_count: number;
  channel: 'api' | 'hosted_page';
  created_at: Date;
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

export interface SanctionsListVersionsTable {
  id: Generated<number>;
  source: string;
  sha256: string;
  published_on: string | null;
  entity_count: number;
  first_loaded_at: Date;
}

export interface ScreeningBatchesTable {
  id: string;
  developer_id: string;
  environment: Environment;
  status: 'processing' | 'completed' | 'failed';
  total: number;
  processed: number;
  potential_matches: number;
  entities_encrypted: string;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface ScreeningsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string | null;
  batch_id: string | null;
  batch_index: number | null;
  status: 'clear' | 'potential_match';
  match_count: number;
  matches: ColumnType<unknown[], string, string>;
  query_encrypted: string;
  entity_type: string | null;
  data_sources_checked: number;
  list_version_ids: number[];
  screened_at: Date;
  created_at: Date;
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

export interface ChainNoncesTable {
  chain: string;
  address: string;
  next_nonce: number;
}

export interface SimulatedChainTransactionsTable {
  hash: string;
  chain: string;
  currency: string;
  from_address: string;
  to_address: string;
  amount_minor: Numeric;
  idempotency_key: string | null;
  created_at: Date;
}

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

export interface ChainSweepsTable {
  /** The transfer id for the transfer's own deposit; the stray's payment key for a stray deposit returned. */
  sweep_key: string;
  transfer_id: string;
  chain: string;
  currency: string;
  from_address: string;
  amount_minor: string;
  gas_signed_transaction: string | null;
  gas_tx_hash: string | null;
  sweep_signed_transaction: string | null;
  sweep_tx_hash: string | null;
  status: 'pending' | 'swept';
  created_at: Date;
  updated_at: Date;
}

/** A customer's wallet (migration 0019). */
export interface WalletsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string;
  type: 'custodial' | 'mpc';
  label: string | null;
  chains: ColumnType<string[], string, string>;
  /** The wallet's address on each of its chains. */
  addresses: ColumnType<Record<string, string>, string, string>;
  /**
   * The private key (custodial) or the platform's key share (mpc), sealed by the KeyVault
   * (src/keys/key-vault.ts), bound to the wallet id; null while an MPC wallet's key is being generated.
   */
  key_sealed: string | null;
  kek_id: string | null;
  /** `key_generation` and `failed`: MPC wallets only (their key generation runs, or ended without a key). */
  status: 'active' | 'key_generation' | 'failed';
  mpc_config: ColumnType<MpcConfig | null, string | null, string | null>;
  created_at: Date;
  updated_at: Date;
}

export interface MpcConfig {
  threshold: number;
  total_shares: number;
  key_type: 'ecdsa';
}

/** One run of the MPC protocol (migration 0023): a key generation or one signing. */
export interface MpcSessionsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  wallet_id: string;
  kind: 'key_generation' | 'signing';
  status: 'awaiting_customer' | 'completed' | 'failed' | 'expired' | 'canceled';
  /** The library's session (or signing) id: fresh, 64 hex characters. */
  protocol_session: string;
  /** The customer's rounds the platform has answered. */
  rounds_done: Generated<number>;
  /** Signing: the customer's share that signs with the platform's (2 the device, 3 the backup). */
  customer_party: number | null;
  platform_public_key: string | null;
  customer_public_key: string | null;
  transfer_id: string | null;
  chain: string | null;
  /** Signing: the unsigned transaction (viem's serialization, hex) and what it pays. */
  transaction: ColumnType<MpcTransaction | null, string | null, string | null>;
  signing_hash: string | null;
  signature: ColumnType<{ r: string; s: string; yParity: number } | null, string | null, string | null>;
  failure_reason: string | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface MpcTransaction {
  serialized: string;
  chain_id: number;
  nonce: number;
  token: string;
  currency: string;
  to: string;
  amount_minor: string;
}

/** A customer round as posted (migration 0023). */
export interface MpcCustomerRoundsTable {
  session_id: string;
  round: number;
  submission: ColumnType<unknown, string, string>;
  created_at: Date;
}

/** The platform party's state and messages after each round (migration 0023). */
export interface MpcPlatformRoundsTable {
  session_id: string;
  round: number;
  state_sealed: string | null;
  messages: ColumnType<unknown[], string, string>;
  created_at: Date;
}

/** A wallet's address on one chain (migration 0020): what the chain's watcher matches transfers against. */
export interface WalletAddressesTable {
  chain: string;
  /** Lower-cased on EVM chains. */
  address: string;
  wallet_id: string;
}

/** Where a chain's wallet watcher reads on from (migration 0020). */
export interface ChainWatchCursorsTable {
  chain: string;
  position: string;
  updated_at: Date;
}

export type WalletTransactionState = 'pending' | 'confirmed' | 'dropped';

/** A token transfer into or out of a wallet, as the chain's watcher saw it (migration 0020). */
export interface WalletTransactionsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  wallet_id: string;
  chain: string;
  currency: string;
  direction: 'incoming' | 'outgoing';
  amount_minor: string;
  tx_hash: string;
  /** The transfer's id on its chain: `{txHash}:{logIndex}` on EVM chains. */
  transfer_ref: string;
  counterparty: string;
  /** The block (or time, on the simulators) it was seen in. */
  position: string;
  confirmations: number;
  state: WalletTransactionState;
  /** The platform transfer it is a leg of, where there is one. */
  transfer_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A transaction a wallet's key signed (migration 0021), stored before it was broadcast. */
export interface WalletSignedTransactionsTable {
  idempotency_key: string;
  wallet_id: string;
  transfer_id: string | null;
  chain: string;
  signed_transaction: string | null;
  tx_hash: string | null;
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

export type WebhookEndpointStatus = 'enabled' | 'disabled' | 'failing';

/** A developer's webhook endpoint (migration 0018). */
export interface WebhookEndpointsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  url: string;
  description: string | null;
  enabled_events: ColumnType<string[], string, string>;
  status: WebhookEndpointStatus;
  /** Why it is failing: the last error of the delivery that gave up. */
  status_reason: string | null;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: string;
  endpoint_id: string;
  status: WebhookDeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
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

export interface BankFilesTable {
  id: string;
  rail: string;
  direction: 'outbound' | 'inbound';
  name: string;
  file_id_modifier: string | null;
  sha256: string;
  contents_encrypted: string;
  entry_count: number;
  total_debit_minor: Numeric;
  total_credit_minor: Numeric;
  status: 'recorded' | 'uploaded' | 'processed' | 'rejected';
  created_at: Date;
  uploaded_at: Date | null;
  /** The file window that built it (outbound; migration 0028). */
  window_id: Generated<string | null>;
  /** Why the bank rejected it, or what it carried (inbound). */
  detail: Generated<string | null>;
}

/** A block the Bitcoin output index has read (migration 0029). */
export interface BitcoinBlocksTable {
  height: number;
  hash: string;
}

/** An output the Bitcoin output index keeps (migration 0029, src/chains/bitcoin/output-index.ts). */
export interface BitcoinOutputsTable {
  txid: string;
  vout: number;
  address: string;
  amount_sats: string;
  height: number;
  owner: 'platform' | 'faucet' | 'wallet' | 'external';
  wallet_id: string | null;
  key_index: number | null;
  from_address: string | null;
  coinbase: boolean;
  own_change: boolean;
  reserved_by: string | null;
  spent_txid: string | null;
  spent_height: number | null;
}

/** The change of a signed transaction of the platform's or a wallet's before a block holds it (migration 0035). */
export interface BitcoinUnconfirmedChangeTable {
  txid: string;
  vout: number;
  address: string;
  amount_sats: string;
  owner: 'platform' | 'faucet' | 'wallet';
  wallet_id: string | null;
  key_index: number | null;
  depth: number;
  made_by: string;
  reserved_by: string | null;
}

/** A payment the bank-file rail holds (migration 0028). */
export interface BankPaymentsTable {
  id: string;
  developer_id: string;
  environment: Environment;
  rail: string;
  direction: 'credit' | 'debit';
  amount_minor: Numeric;
  currency: string;
  external_account_id: string | null;
  purpose: string;
  idempotency_key: string;
  reference: string | null;
  /** The entry's individual id number in the file (15 digits): how a return names it. */
  entry_ref: Generated<string>;
  status: 'queued' | 'filed' | 'rejected' | 'returned';
  code: string | null;
  file_id: string | null;
  /** YYYY-MM-DD: the settlement date the file asks for. */
  effective_date: string | null;
  settles_at: Date | null;
  created_at: Date;
  returned_at: Date | null;
  /** ACH: the trace number the entry went out with (migration 0036). */
  trace_number: string | null;
  /** Why the payment was set aside instead of filed: the field and what is wrong with it. */
  reason: string | null;
}

/** The next ACH trace counter of each ODFI (7 digits, from 1). */
export interface AchTraceCountersTable {
  odfi: string;
  next_trace: number;
}

export interface BankFilePaymentsTable {
  file_id: string;
  payment_id: string;
}

export interface Database extends ReconciliationTables {
  developers: DevelopersTable;
  api_keys: ApiKeysTable;
  customers: CustomersTable;
  kyc_submissions: KycSubmissionsTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  sanctions_list_versions: SanctionsListVersionsTable;
  screening_batches: ScreeningBatchesTable;
  screenings: ScreeningsTable;
  external_accounts: ExternalAccountsTable;
  rail_payments: RailPaymentsTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  transfers: TransfersTable;
  transfer_volumes: TransferVolumesTable;
  payments: PaymentsTable;
  chain_nonces: ChainNoncesTable;
  simulated_chain_transactions: SimulatedChainTransactionsTable;
  chain_sweeps: ChainSweepsTable;
  rail_events: RailEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  wallets: WalletsTable;
  wallet_addresses: WalletAddressesTable;
  chain_watch_cursors: ChainWatchCursorsTable;
  wallet_transactions: WalletTransactionsTable;
  wallet_signed_transactions: WalletSignedTransactionsTable;
  platform_accounts: PlatformAccountsTable;
  mpc_sessions: MpcSessionsTable;
  mpc_platform_rounds: MpcPlatformRoundsTable;
  mpc_customer_rounds: MpcCustomerRoundsTable;
  bank_files: BankFilesTable;
  bank_file_payments: BankFilePaymentsTable;
  bank_payments: BankPaymentsTable;
  ach_trace_counters: AchTraceCountersTable;
  bitcoin_blocks: BitcoinBlocksTable;
  bitcoin_outputs: BitcoinOutputsTable;
  bitcoin_unconfirmed_change: BitcoinUnconfirmedChangeTable;
  payment_routes: PaymentRoutesTable;
  route_deposits: RouteDepositsTable;
}

export type TransferRow = Selectable<TransfersTable>;
export type PaymentRow = Selectable<PaymentsTable>;

export type ExternalAccountRow = Selectable<ExternalAccountsTable>;

export type ScreeningRow = Selectable<ScreeningsTable>;
export type ScreeningBatchRow = Selectable<ScreeningBatchesTable>;

export type CustomerRow = Selectable<CustomersTable>;
export type NewCustomer = Insertable<CustomersTable>;
export type CustomerUpdate = Updateable<CustomersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type EventRow = Selectable<EventsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WalletRow = Selectable<WalletsTable>;
export type MpcSessionRow = Selectable<MpcSessionsTable>;
export type WalletTransactionRow = Selectable<WalletTransactionsTable>;
export type PlatformAccountRow = Selectable<PlatformAccountsTable>;

/** Where a route's deposits go: a transfer's destination leg (POST /v0/transfers' `destination`). */
export interface RouteDestination {
  payment_rail: string;
  currency: string;
  to_address?: string;
  external_account_id?: string;
  wallet_id?: string;
  account_id?: string;
}

/** A standing route: a liquidation address or a virtual account (migration 0030, src/routes/). */
export interface PaymentRoutesTable {
  id: string;
  developer_id: string;
  environment: Environment;
  customer_id: string;
  kind: 'liquidation_address' | 'virtual_account';
  status: 'active' | 'deactivated';
  source_rail: string;
  source_currency: string;
  /** The address as the watcher compares it (walletAddressKey), and as it is shown. */
  address: string | null;
  display_address: string | null;
  deposit_index: string | null;
  deposit_reference: string | null;
  destination: ColumnType<RouteDestination, string, string>;
  developer_fee_percent: Numeric;
  return_address: string | null;
  /** The route's own limits in minor units of its source currency (migration 0031); null: none. */
  limit_per_deposit_minor: Numeric | null;
  limit_per_day_minor: Numeric | null;
  created_at: Date;
  updated_at: Date;
}
export type PaymentRouteRow = Selectable<PaymentRoutesTable>;

export type RouteDepositState = 'confirming' | 'confirmed' | 'transferred' | 'dropped' | 'held';

/** A deposit a route received, once, and what became of it (migration 0030). */
export interface RouteDepositsTable {
  id: string;
  route_id: string;
  developer_id: string;
  environment: Environment;
  deposit_key: string;
  rail: string;
  currency: string;
  amount_minor: Numeric;
  tx_hash: string | null;
  position: string | null;
  sender: string | null;
  /** A virtual account's deposit: the provider's payment id (migration 0031). */
  provider_payment_id: string | null;
  confirmations: number;
  state: RouteDepositState;
  transfer_id: string | null;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
}
export type RouteDepositRow = Selectable<RouteDepositsTable>;
