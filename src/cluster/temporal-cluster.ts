import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startServiceProcess, type ServiceProcess } from '../embedded/service-process';
import { setUpNamespace, waitUntilFrontendServes } from '../temporal/namespace-setup';
import {
  TEMPORAL_CONFIG_DIR, TEMPORAL_CONFIG_ENV, TEMPORAL_DYNAMIC_CONFIG, TEMPORAL_FRONTEND_PORT, TEMPORAL_SERVICES,
  TEMPORAL_UI_CONFIG_DIR, TEMPORAL_UI_PORT, TEMPORAL_UI_VERSION,
} from './layout';

const root = path.join(__dirname, '../..');
const READY_TIMEOUT_MS = 120_000;

/** Where the Temporal server keeps its two databases (history and visibility). */
export interface TemporalDatabases {
  host: string; port: number; user: string; password: string;
  name: string; visibilityName: string;
}

export interface TemporalClusterOptions {
  db: TemporalDatabases;
  namespace: string;
  /** Added to every port of the layout (a second cluster on the same machine, the smoke test). */
  portOffset: number;
  /** Logs and pid files. */
  dir: string;
  /** The API that decodes payloads for the Web UI. */
  codecEndpoint: string;
}

/**
 * Builds the server, its SQL tool and the UI server once into the cache outside the clone (minutes
 * the first time; scripts/install-temporal-server.sh says how it goes) and returns their folders.
 */
export function installTemporalServer(): { serverDir: string; uiServer: string } {
  const run = spawnSync('bash', [path.join(root, 'scripts/install-temporal-server.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error('could not install the Temporal server (scripts/install-temporal-server.sh)');
  const serverDir = run.stdout.trim().split('\n').pop()!;
  return { serverDir, uiServer: path.join(path.dirname(serverDir), `temporal-ui-${TEMPORAL_UI_VERSION}`, 'ui-server') };
}

/** Creates the history and visibility databases if missing and brings both schemas to the release's latest (idempotent). */
export function setUpTemporalSchemas(sqlTool: string, db: TemporalDatabases) {
  const connect = ['--plugin', 'postgres12', '--ep', db.host, '-p', String(db.port), '-u', db.user, ...(db.password ? ['--pw', db.password] : [])];
  const tool = (args: string[], what: string) => {
    const run = spawnSync(sqlTool, [...connect, ...args], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`temporal-sql-tool ${what} failed: ${(run.stderr || run.stdout).trim().slice(-2000)}`);
  };
  for (const [name, schema] of [[db.name, 'temporal'], [db.visibilityName, 'visibility']]) {
    tool(['--db', name, 'create-database'], `create-database ${name}`);
    tool(['--db', name, 'setup-schema', '-v', '0.0'], `setup-schema ${name}`);
    tool(['--db', name, 'update-schema', '--schema-name', `postgresql/v12/${schema}`], `update-schema ${name}`);
  }
}

/** The environment deploy/temporal/cluster.yaml is rendered from, for one service process. */
export function temporalServiceEnv(opts: TemporalClusterOptions, metricsPort: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    TEMPORAL_PORT_OFFSET: String(opts.portOffset),
    TEMPORAL_DB_HOST: opts.db.host,
    TEMPORAL_DB_PORT: String(opts.db.port),
    TEMPORAL_DB_USER: opts.db.user,
    TEMPORAL_DB_PASSWORD: opts.db.password,
    TEMPORAL_DB_NAME: opts.db.name,
    TEMPORAL_VISIBILITY_DB_NAME: opts.db.visibilityName,
    TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${metricsPort + opts.portOffset}`,
    TEMPORAL_DYNAMIC_CONFIG: path.join(root, TEMPORAL_DYNAMIC_CONFIG),
  };
}

/**
 * Starts the server's services as separate processes (history, matching, frontend, internal
 * worker), waits until the frontend serves, sets up the namespace and search attributes, then starts
 * the Web UI. Returns the frontend's address and the processes, in the order they started.
 */
export async function startTemporalCluster(opts: TemporalClusterOptions, bins: { serverDir: string; uiServer: string }) {
  const server = path.join(bins.serverDir, 'temporal-server');
  setUpTemporalSchemas(path.join(bins.serverDir, 'temporal-sql-tool'), opts.db);
  fs.mkdirSync(opts.dir, { recursive: true });
  const processes: { name: string; process: ServiceProcess }[] = [];
  try {
    for (const service of TEMPORAL_SERVICES) {
      const process = await startServiceProcess({
        command: server,
        args: ['--root', root, '--config', TEMPORAL_CONFIG_DIR, '--env', TEMPORAL_CONFIG_ENV, '--allow-no-auth', 'start', '--service', service.name],
        env: temporalServiceEnv(opts, service.metricsPort),
        pidFile: path.join(opts.dir, `temporal-${service.name}.pid`),
        logFile: path.join(opts.dir, `temporal-${service.name}.log`),
      });
      processes.push({ name: `temporal ${service.name}`, process });
      // The first service to start on a new database writes the cluster's metadata; services that
      // start at the same moment race to write it and one of them fails. Start the others once the
      // first serves.
      if (processes.length === 1) await waitForPort(service.grpcPort + opts.portOffset, processes);
    }
    const address = `127.0.0.1:${TEMPORAL_FRONTEND_PORT + opts.portOffset}`;
    await waitUntilFrontendServes(address, 'temporal-system', {
      timeoutMs: READY_TIMEOUT_MS, intervalMs: 500, what: 'the Temporal frontend', stoppedReason: () => stoppedService(processes),
    });
    await setUpNamespace(address, opts.namespace, { waitMs: 30_000 });
    const uiPort = TEMPORAL_UI_PORT + opts.portOffset;
    const ui = await startServiceProcess({
      command: bins.uiServer,
      args: ['--root', root, '--config', TEMPORAL_UI_CONFIG_DIR, '--env', TEMPORAL_CONFIG_ENV, 'start'],
      env: {
        PATH: process.env.PATH, TEMPORAL_ADDRESS: address, TEMPORAL_UI_PORT: String(uiPort),
        TEMPORAL_NAMESPACE: opts.namespace, TEMPORAL_UI_CODEC_ENDPOINT: opts.codecEndpoint,
      },
      pidFile: path.join(opts.dir, 'temporal-ui.pid'),
      logFile: path.join(opts.dir, 'temporal-ui.log'),
    });
    processes.push({ name: 'temporal ui', process: ui });
    return { address, uiUrl: `http://localhost:${uiPort}`, processes };
  } catch (err) {
    for (const { process } of processes.reverse()) await process.stop();
    throw err;
  }
}

/** Why the cluster can no longer come up: a service exited while starting, in its own words. */
function stoppedService(processes: { name: string; process: ServiceProcess }[]): string | undefined {
  const gone = processes.find((p) => p.process.exited());
  return gone && `${gone.name} stopped while starting: ${gone.process.stderrTail().slice(-1500)}`;
}

/** Waits until a service's gRPC port accepts connections, or fails with its own words if it exits. */
async function waitForPort(port: number, processes: { name: string; process: ServiceProcess }[]) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const stopped = stoppedService(processes);
    if (stopped) throw new Error(stopped);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing answered on port ${port} within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
