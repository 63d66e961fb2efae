import http from 'node:http';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { KeyVault } from '../keys/key-vault';
import type { Logger } from '../logger';
import { createApp } from './app';
import { createMoneyProviders } from '../providers';
import { describeLive } from '../providers/availability';
import { InProcessRateLimiter, RedisRateLimiter } from './rate-limit';
import type { SanctionsScreener } from '../sanctions/screener';

/** How long a stop lets requests in flight finish before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Starts the HTTP API; `stop` lets in-flight requests finish (up to SHUTDOWN_GRACE_MS) before closing. */
export async function startApiServer(opts: { config: Config; db: Db; temporal: Client; cipher: DataCipher; keys: KeyVault; log: Logger; sanctions: SanctionsScreener }) {
  const rateLimiter = opts.config.REDIS_URL ? new RedisRateLimiter(opts.config.REDIS_URL) : new InProcessRateLimiter();
  const providers = createMoneyProviders(opts.config, opts.db, opts.keys);
  // Operators see at start which live rails and providers are real and which answer 503.
  opts.log.info({ live: providers.availability.live }, describeLive(providers.availability.live));
  const app = createApp({ ...opts, ...providers, rateLimiter });
  // Answers still to be written when a stop begins, and any after it, say `Connection: close`: the
  // client then never sends its next request on a connection the server is about to close.
  let stopping = false;
  const inFlight = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    app(req, res);
  });
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
      stopping = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      await new Promise<void>((resolve) => {
        // close() ends only the connections idle at that moment: one still answering a request would
        // stay open once done, for up to keepAliveTimeout (when its answer was already on its way
        // without `Connection: close`). Each is closed as soon as its answer is out, and whatever is
        // left after the grace period is cut.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      await rateLimiter.close();
    },
  };
}
