import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PgliteSessionQueue } from './pglite-session-queue';
import { ensurePortFree } from './service-process';

/**
 * Embedded PostgreSQL (PGlite) kept under DATA_DIR, served over the PostgreSQL wire protocol so the
 * API, the worker and the CLI use the same `pg` code path as production. PGlite runs one transaction
 * at a time: code must never wait on a second connection while holding a transaction.
 */
export async function startEmbeddedPostgres(opts: { dataDir: string; port: number }) {
  await ensurePortFree({ port: opts.port, what: 'The embedded PostgreSQL (PGlite)', setting: 'PGLITE_PORT' });
  const dir = path.join(opts.dataDir, 'pglite');
  fs.mkdirSync(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: opts.port, maxConnections: 100 });
  // pglite-socket's own queue lets connections' queries interleave mid-cycle: ours keeps each whole (pglite-session-queue.ts).
  (server as unknown as { queryQueue: PgliteSessionQueue }).queryQueue = new PgliteSessionQueue(db);
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${opts.port}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}
