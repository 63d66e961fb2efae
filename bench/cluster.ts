import path from 'node:path';
import pg from 'pg';
import { installTemporalServer, startTemporalCluster } from '../src/cluster/temporal-cluster';

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Beside anything on the layout's default ports (a `npm run stack:cluster` left running). */
const PORT_OFFSET = 20_000;

/**
 * The Temporal part of the production layout (`npm run stack:cluster`) for a benchmark: the
 * server's services as separate processes on fresh PostgreSQL databases, dropped at the stop.
 */
export async function startBenchTemporalCluster(logDir: string) {
  const admin = new URL(ADMIN_URL);
  const db = {
    host: admin.hostname, port: Number(admin.port || 5432), user: decodeURIComponent(admin.username), password: decodeURIComponent(admin.password),
    name: 'fp_bench_temporal', visibilityName: 'fp_bench_temporal_visibility',
  };
  const dropDatabases = () => dropDatabasesIfExist(db.name, db.visibilityName);
  await dropDatabases();
  const cluster = await startTemporalCluster(
    { db, namespace: 'default', portOffset: PORT_OFFSET, dir: path.join(logDir, 'cluster'), codecEndpoint: '' },
    installTemporalServer(),
  );
  return {
    address: cluster.address,
    stop: async () => {
      for (const { process } of [...cluster.processes].reverse()) await process.stop();
      await dropDatabases();
    },
  };
}

async function dropDatabasesIfExist(...databases: string[]) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    for (const name of databases) await client.query(`drop database if exists ${name} with (force)`);
  } finally {
    await client.end();
  }
}
