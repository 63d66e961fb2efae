import { Kysely, Migrator, PostgresDialect, type Migration, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { Database } from './schema';
import { PreparingClient } from './prepared-statements';
import * as m0001 from './migrations/0001_foundation';
import * as m0002 from './migrations/0002_sanctions';
import * as m0003 from './migrations/0003_external_accounts';
import * as m0004 from './migrations/0004_rail_payments';
import * as m0005 from './migrations/0005_ledger';
import * as m0006 from './migrations/0006_transfers';
import * as m0007 from './migrations/0007_transfer_review_decisions';
import * as m0008 from './migrations/0008_kyc_decisions';
import * as m0009 from './migrations/0009_payout_replacements';
import * as m0010 from './migrations/0010_rail_payment_reference';
import * as m0011 from './migrations/0011_chain_deposit_sweeps';
import * as m0012 from './migrations/0012_stray_chain_deposits';
import * as m0013 from './migrations/0013_stray_deposit_release';
import * as m0014 from './migrations/0014_stray_scan_indexes';
import * as m0015 from './migrations/0015_rail_events';
import * as m0016 from './migrations/0016_rail_event_resolution';
import * as m0017 from './migrations/0017_rail_event_sender';
import * as m0018 from './migrations/0018_webhooks';
import * as m0019 from './migrations/0019_wallets';
import * as m0020 from './migrations/0020_wallet_transactions';
import * as m0021 from './migrations/0021_wallet_transfers';
import * as m0022 from './migrations/0022_platform_accounts';
import * as m0023 from './migrations/0023_mpc_wallets';
import * as m0024 from './migrations/0024_screening_batch_updated_at';
import * as m0025 from './migrations/0025_customer_suspension';
import * as m0026 from './migrations/0026_developer_allowed_origins';
import * as m0027 from './migrations/0027_bank_files';
import * as m0028 from './migrations/0028_bank_file_rail';
import * as m0029 from './migrations/0029_bitcoin_outputs';
import * as m0030 from './migrations/0030_payment_routes';
import * as m0031 from './migrations/0031_virtual_accounts';
import * as m0032 from './migrations/0032_abort_statement';
import * as m0033 from './migrations/0033_transfer_volumes';
import * as m0034 from './migrations/0034_one_payment_per_signature';
import * as m0035 from './migrations/0035_bitcoin_unconfirmed_change';
import * as m0036 from './migrations/0036_bank_payment_traces';
import * as m0037 from './migrations/0037_reconciliation';
import * as m0038 from './migrations/0038_reconciliation_resolutions';
import * as m0039 from './migrations/0039_reconciliation_chain_runs';
import * as m0040 from './migrations/0040_reconciliation_closing_balance';
import * as m0041 from './migrations/0041_reconciliation_chain_holdings';

// bigint columns (seq, counters) come back as strings unless parsed; ours fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export type Db = Kysely<Database>;

/**
 * `preparedStatements`: statements with parameters are prepared once per connection
 * (prepared-statements.ts); off for the embedded PGlite, whose one session all connections share,
 * and behind a pooler that does not keep prepared statements.
 */
export function createDb(databaseUrl: string, poolSize = 20, opts: { preparedStatements?: boolean } = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl, max: poolSize, idleTimeoutMillis: 30_000, ...(opts.preparedStatements ? { Client: PreparingClient } : {}),
  });
  // A connection dropped by the server (restart, failover, network) must fail the query using it,
  // never crash the process: every client gets an error listener, idle or checked out.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** Migrations are compiled into the code (not read from disk) so every entry point runs the same set. */
const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_sanctions': m0002,
  '0003_external_accounts': m0003,
  '0004_rail_payments': m0004,
  '0005_ledger': m0005,
  '0006_transfers': m0006,
  '0007_transfer_review_decisions': m0007,
  '0008_kyc_decisions': m0008,
  '0009_payout_replacements': m0009,
  '0010_rail_payment_reference': m0010,
  '0011_chain_deposit_sweeps': m0011,
  '0012_stray_chain_deposits': m0012,
  '0013_stray_deposit_release': m0013,
  '0014_stray_scan_indexes': m0014,
  '0015_rail_events': m0015,
  '0016_rail_event_resolution': m0016,
  '0017_rail_event_sender': m0017,
  '0018_webhooks': m0018,
  '0019_wallets': m0019,
  '0020_wallet_transactions': m0020,
  '0021_wallet_transfers': m0021,
  '0022_platform_accounts': m0022,
  '0023_mpc_wallets': m0023,
  '0024_screening_batch_updated_at': m0024,
  '0025_customer_suspension': m0025,
  '0026_developer_allowed_origins': m0026,
  '0027_bank_files': m0027,
  '0028_bank_file_rail': m0028,
  '0029_bitcoin_outputs': m0029,
  '0030_payment_routes': m0030,
  '0031_virtual_accounts': m0031,
  '0032_abort_statement': m0032,
  '0033_transfer_volumes': m0033,
  '0034_one_payment_per_signature': m0034,
  '0035_bitcoin_unconfirmed_change': m0035,
  '0036_bank_payment_traces': m0036,
  '0037_reconciliation': m0037,
  '0038_reconciliation_resolutions': m0038,
  '0039_reconciliation_chain_runs': m0039,
  '0040_reconciliation_closing_balance': m0040,
  '0041_reconciliation_chain_holdings': m0041,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations() {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
