import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import type { Logger } from '../logger';
import type { RateLimiter } from './rate-limit';
import type { SanctionsScreener } from '../sanctions/screener';
import type { MoneyProviders } from '../providers';

/** Everything a request handler may touch, built once per process. */
export interface AppDeps extends MoneyProviders {
  config: Config;
  db: Db;
  temporal: Client;
  cipher: DataCipher;
  log: Logger;
  rateLimiter: RateLimiter;
  sanctions: SanctionsScreener;
}

export const PERMISSIONS = [
  'customers:read', 'customers:write',
  'accounts:read', 'accounts:write',
  'transfers:read', 'transfers:write',
  'payments:read', 'payments:write',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export interface AuthContext {
  keyId: string;
  developerId: string;
  environment: Environment;
  kind: 'secret' | 'publishable';
  /** null: an unrestricted secret key. */
  permissions: Permission[] | null;
  limits: { perSecond: number; perDay: number };
}
