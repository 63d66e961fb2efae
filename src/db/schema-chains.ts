import type { Numeric } from './column-types';

// The chains' own tables: nonces, sweeps, watch cursors, the simulators' transactions, the Bitcoin output index (src/chains/).

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

/** Where a chain's wallet watcher reads on from (migration 0020). */
export interface ChainWatchCursorsTable {
  chain: string;
  position: string;
  updated_at: Date;
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

export interface ChainTables {
  chain_nonces: ChainNoncesTable;
  simulated_chain_transactions: SimulatedChainTransactionsTable;
  chain_sweeps: ChainSweepsTable;
  chain_watch_cursors: ChainWatchCursorsTable;
  bitcoin_blocks: BitcoinBlocksTable;
  bitcoin_outputs: BitcoinOutputsTable;
  bitcoin_unconfirmed_change: BitcoinUnconfirmedChangeTable;
}
