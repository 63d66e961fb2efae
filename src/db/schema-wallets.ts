import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Environment } from './column-types';

// Customers' wallets and their MPC sessions (src/wallets/, src/mpc/, docs/WALLETS.md, docs/MPC.md).

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

export type WalletRow = Selectable<WalletsTable>;

export type MpcSessionRow = Selectable<MpcSessionsTable>;

export type WalletTransactionRow = Selectable<WalletTransactionsTable>;

export interface WalletTables {
  wallets: WalletsTable;
  wallet_addresses: WalletAddressesTable;
  wallet_transactions: WalletTransactionsTable;
  wallet_signed_transactions: WalletSignedTransactionsTable;
  mpc_sessions: MpcSessionsTable;
  mpc_platform_rounds: MpcPlatformRoundsTable;
  mpc_customer_rounds: MpcCustomerRoundsTable;
}
