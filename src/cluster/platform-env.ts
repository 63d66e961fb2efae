import path from 'node:path';
import { readOrCreateKeyFile } from '../crypto';
import type { ClusterOptions } from './options';

/** What the API and worker processes are given: as docker-compose.yml's x-app-env gives them. */
export function platformEnv(opts: ClusterOptions, parts: { temporalAddress: string; evmRpcUrls: string; solanaRpcUrl: string; bitcoinRpcUrl: string; publicBaseUrl: string }): NodeJS.ProcessEnv {
  const key = (name: string) => process.env[name] || readOrCreateKeyFile(path.join(opts.dir, 'keys', name.toLowerCase())).toString('base64');
  return {
    ...process.env,
    DATABASE_URL: opts.platformDatabaseUrl,
    TEMPORAL_ADDRESS: parts.temporalAddress,
    REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    DATA_ENCRYPTION_KEY: key('DATA_ENCRYPTION_KEY'),
    WALLET_KEK: key('WALLET_KEK'),
    PUBLIC_BASE_URL: parts.publicBaseUrl,
    EVM_RPC_URLS: parts.evmRpcUrls,
    SOLANA_RPC_URL: parts.solanaRpcUrl,
    BITCOIN_RPC_URL: parts.bitcoinRpcUrl,
    DATA_DIR: opts.dir,
  };
}
