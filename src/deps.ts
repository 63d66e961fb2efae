import type { Client } from '@temporalio/client';
import type { Config } from './config';
import type { DataCipher } from './crypto';
import type { Db } from './db';
import type { Logger } from './logger';
import type { MoneyProviders } from './providers';
import type { SanctionsScreener } from './sanctions/screener';

/**
 * What a process shares with the core modules, built once at its start. Each use-case takes the part
 * it needs (`Pick<PlatformDeps, 'db' | 'temporal'>`), so a caller with less (the CLI) can call it.
 */
export interface PlatformDeps extends MoneyProviders {
  config: Config;
  db: Db;
  temporal: Client;
  cipher: DataCipher;
  log: Logger;
  sanctions: SanctionsScreener;
}
