import path from 'node:path';
import { z } from 'zod';

/** `npm run stack:cluster`'s own settings (docs/DEPLOYMENT.md); the platform's are the usual ones (src/config.ts). */
const clusterEnvSchema = z.object({
  /** A PostgreSQL role that may create databases: the platform's and the Temporal server's two. */
  CLUSTER_DATABASE_ADMIN_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/postgres'),
  /** Names the databases: PREFIX (the platform's), PREFIX_temporal and PREFIX_temporal_visibility. */
  CLUSTER_DB_PREFIX: z.string().regex(/^[a-z][a-z0-9_]{0,40}$/, 'lower-case letters, digits and _').default('fp_cluster'),
  /** Added to every port of the layout, to run a second cluster beside the first (the smoke test). */
  CLUSTER_PORT_OFFSET: z.coerce.number().int().min(0).max(50_000).default(0),
});

export type ClusterOptions = ReturnType<typeof clusterOptions>;

export function clusterOptions(env: NodeJS.ProcessEnv, dataDir: string) {
  const parsed = clusterEnvSchema.parse(env);
  const admin = new URL(parsed.CLUSTER_DATABASE_ADMIN_URL);
  const prefix = parsed.CLUSTER_DB_PREFIX;
  const withDatabase = (name: string) => Object.assign(new URL(admin.href), { pathname: `/${name}` }).href;
  return {
    adminUrl: admin.href,
    portOffset: parsed.CLUSTER_PORT_OFFSET,
    /** Logs, pid files, generated keys and the workflow bundle. */
    dir: path.join(dataDir, prefix),
    platformDatabase: prefix,
    platformDatabaseUrl: withDatabase(prefix),
    temporalDb: {
      host: admin.hostname, port: Number(admin.port || 5432),
      user: decodeURIComponent(admin.username), password: decodeURIComponent(admin.password),
      name: `${prefix}_temporal`, visibilityName: `${prefix}_temporal_visibility`,
    },
  };
}
