import http from 'node:http';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { createApp } from './app';
import { createMoneyProviders } from '../providers';
import { InProcessRateLimiter, RedisRateLimiter } from './rate-limit';
import type { SanctionsScreener } from '../sanctions/screener';

/** Starts the HTTP API; `stop` lets in-flight requests finish before closing. */
export async function startApiServer(opts: { config: Config; db: Db; temporal: Client; cipher: DataCipher; log: Logger; sanctions: SanctionsScreener }) {
  const rateLimiter = opts.config.REDIS_URL ? new RedisRateLimiter(opts.config.REDIS_URL) : new InProcessRateLimiter();
  const app = createApp({ ...opts, ...createMoneyProviders(opts.config, opts.db), rateLimiter });
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.config.PORT, opts.config.HOST, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.config.PORT;
  return {
    port,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await rateLimiter.close();
    },
  };
}
