// The production layout that `npm run stack:cluster` runs on one machine and docker-compose.yml
// describes for containers (docs/DEPLOYMENT.md). test/unit/cluster-layout.test.ts holds the two to the
// same versions, ports and settings: change them here and in the compose file together.

/** The Temporal server release the CLI v1.5.1 embeds (scripts/install-temporal-server.sh builds it). */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
/** The Temporal Web UI server the same CLI embeds. */
export const TEMPORAL_UI_VERSION = 'v2.42.1';

/** The server's configuration: one file for every service, rendered from the environment. */
export const TEMPORAL_CONFIG_DIR = 'deploy/temporal';
export const TEMPORAL_CONFIG_ENV = 'cluster';
export const TEMPORAL_DYNAMIC_CONFIG = 'deploy/temporal/dynamicconfig.yaml';
export const TEMPORAL_UI_CONFIG_DIR = 'deploy/temporal-ui';

export type TemporalServiceName = 'frontend' | 'history' | 'matching' | 'worker';

/** The server's services, each its own process; ports as deploy/temporal/cluster.yaml sets them (before any offset). */
export const TEMPORAL_SERVICES: { name: TemporalServiceName; grpcPort: number; membershipPort: number; metricsPort: number }[] = [
  { name: 'history', grpcPort: 7234, membershipPort: 6934, metricsPort: 9091 },
  { name: 'matching', grpcPort: 7235, membershipPort: 6935, metricsPort: 9092 },
  { name: 'frontend', grpcPort: 7233, membershipPort: 6933, metricsPort: 9093 },
  { name: 'worker', grpcPort: 7239, membershipPort: 6939, metricsPort: 9094 },
];
export const TEMPORAL_FRONTEND_PORT = 7233;
export const TEMPORAL_UI_PORT = 8233;

/** The platform's own processes: two of each, so that either can be lost (docs/DEPLOYMENT.md). */
export const API_PORTS = [3000, 3001];
export const WORKER_COUNT = 2;
/** Each worker's Prometheus endpoint (the Temporal SDK's metrics), one port per worker. */
export const WORKER_METRICS_PORTS = [9464, 9465];
