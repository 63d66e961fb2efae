import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { temporal } from '@temporalio/proto';
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { resolveTemporalCli } from '../../src/embedded/temporal-cli';
import { ALL_SEARCH_ATTRIBUTES } from '../../src/temporal/search-attributes';
import type { StackInfo } from './stack-file';
import { createApiKey, createDeveloper } from '../../src/admin/accounts';
import { createDb, migrateToLatest } from '../../src/db';
import { writeReferenceManifest } from '../../bench/reference-lists';
import { startAnvilNodes } from '../../src/embedded/anvil';
import { startSolanaNode } from '../../src/embedded/solana';
import { startBitcoinNode } from '../../src/embedded/bitcoin';
import { EVM_CHAINS } from '../../src/domain/rails';
import { buildWorkflowBundle } from '../../workers/workflow-bundle';
import { startSftpServer, type SftpServer } from './sftp-server';
import { asRole } from './work-counts';

const silentLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

const root = path.join(__dirname, '../..');
export const adminUrl = () => process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The real parts, as production runs them: the Temporal CLI dev server (pinned version), a fresh
 * PostgreSQL database, and the production API and worker processes (`src/main/api.ts`,
 * `workers/main.ts`). Used by the test suite and the benchmarks.
 */
export async function startStack(opts: {
  name: string; logDir: string; extraEnv?: Record<string, string>;
  /** A Temporal cluster already running (bench:transfers on the production layout); default: a dev server of the stack's own. */
  temporalAddress?: string;
  /** A bank on a real SFTP server, carrying the live ACH rails through files (test/harness/test-bank.ts). */
  bank?: boolean;
  /** Settings of the bank's files other than the tests' (windows, settlement). */
  bankEnv?: Record<string, string>;
  /** The database role the API and worker connect as (bench:transfers counts its statements); default the admin URL's. */
  databaseRole?: string;
}) {
  fs.mkdirSync(opts.logDir, { recursive: true });
  const temporalEnv = opts.temporalAddress ? undefined : await startTestTemporalServer(await freePort());
  const temporalAddress = opts.temporalAddress ?? temporalEnv!.address;

  // What has been started so far, stopped in reverse order; also when a later step fails, so that a
  // failed start leaves no dev server or chain node behind (the dev server is not our child process).
  const started: (() => Promise<void>)[] = temporalEnv ? [() => temporalEnv.teardown()] : [];
  const stopStarted = async () => {
    for (const stop of started.splice(0).reverse()) await stop().catch(() => undefined);
  };
  const dbName = `fp_${opts.name}_${process.pid}`;
  try {
    // One local anvil node per EVM chain, with the sandbox stablecoins deployed; four blocks a second
    // so that confirmations accrue in a quarter of the time `npm start`'s one-second blocks take.
    const anvil = await startAnvilNodes({ basePort: await freePortRange(EVM_CHAINS.length), mnemonic: TEST_MNEMONIC, blockTimeSeconds: 0.25 });
    started.push(() => anvil.stop());
    // The sandbox's Solana node (LiteSVM), its slots at Solana's 0.4 s; a blockhash usable for 25
    // slots (10 s, not Solana's 60), so that a dropped transaction's replacement is seen in a test.
    const solana = await startSolanaNode({ port: await freePort(), mnemonic: TEST_MNEMONIC, blockhashValiditySlots: 25 });
    started.push(() => solana.stop());
    // The sandbox's Bitcoin node (btcd in regtest) without a block clock: a test mines the blocks it needs (test/harness/bitcoin.ts).
    const bitcoin = await startBitcoinNode({ port: await freePort(), mnemonic: TEST_MNEMONIC, blockMs: 0 });
    started.push(() => bitcoin.stop());

    await adminQuery(`drop database if exists ${dbName} with (force)`);
    await adminQuery(`create database ${dbName}`);
    const databaseUrl = adminUrl().replace(/\/[^/]*$/, `/${dbName}`);
    // Migrated before the processes start, as a deployment runs `cli migrate` first: the worker reads
    // tables as it starts, and the API's own migration may not have ended by then (seen on a loaded machine).
    const migrating = createDb(databaseUrl, 1);
    await migrateToLatest(migrating).finally(() => migrating.destroy());

    const bank = opts.bank ? await startSftpServer() : undefined;
    if (bank) started.push(() => bank.stop());

    // Workers run the workflow code bundled ahead of time, as in production (workers/workflow-bundle.ts).
    const workflowBundle = await buildWorkflowBundle(path.join(opts.logDir, 'workflow-bundle.js'), silentLogger);

    const apiPort = await freePort();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATABASE_URL: opts.databaseRole ? asRole(databaseUrl, opts.databaseRole) : databaseUrl,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: `${opts.name}-${process.pid}`,
      DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      WALLET_KEK: randomBytes(32).toString('base64'),
      RAIL_WEBHOOK_SECRET: randomBytes(32).toString('hex'),
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
      LOG_LEVEL: 'info',
      DATA_DIR: path.join(opts.logDir, 'data'),
      // The sandbox clock at 43,200×: ACH settles in 2 s, a 14-day micro-deposit expiry takes 28 s.
      SANDBOX_TIME_SCALE: '43200',
      // Two test files at a time share this stack on two cores: a loaded run has seen workflow tasks
      // take 8 s, so requests a workflow answers wait longer than production's 10 s before their 503
      // (the tests of that 503 start processes of their own with a short wait).
      WORKFLOW_ANSWER_TIMEOUT_SECONDS: '30',
      // Tests run the stray-deposit scan themselves, when their scenario needs it.
      STRAY_DEPOSIT_SCAN_SECONDS: '86400',
      // Webhook retries in a fraction of a second, a hung receiver given up on after 2 s.
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_POLL_MS: '100',
      // A quiet endpoint (every earlier test file's) is looked at once a second, not ten times.
      WEBHOOK_IDLE_POLL_MS: '1000',
      // A pending co-signature looks every 2 s whether a recovery used its nonce.
      MPC_NONCE_CHECK_MS: '2000',
      // A wallet watcher's activity ends every 5 s (its replay test reads a history of several).
      WALLET_WATCH_PERIOD_MS: '5000',
      // The reference lists of the repository (the snapshot's and the fixtures'), read in place.
      SANCTIONS_DATA_DIR: writeReferenceManifest(path.join(opts.logDir, 'sanctions')),
      EVM_RPC_URLS: anvil.env,
      SOLANA_RPC_URL: solana.url,
      BITCOIN_RPC_URL: bitcoin.url,
      // A payout no block took within 10 s is replaced at a higher fee (the RBF test leaves one out of blocks that long).
      BITCOIN_RBF_AFTER_SECONDS: '10',
      // Replacements every 10 s raise the node's fee estimate for everything mined after them; held at
      // 500 sat/vB, 9 sends of 0.01 btc with their fees still fit a wallet of 0.1 (bitcoin-wallet-chained-sends).
      BITCOIN_MAX_FEE_RATE: '500',
      CHAIN_TREASURY_MNEMONIC: TEST_MNEMONIC,
      // The live rate sheet prices the gas of ethereum's and fpnet's kind, not polygon's (test/e2e/live-fails-closed.test.ts).
      // …and euros, for live payouts over SEPA (test/e2e/bank-files-sepa.test.ts).
      LIVE_FX_RATES: 'eth=3000,fpn=1,eur=1.08',
      WORKFLOW_BUNDLE_PATH: workflowBundle,
      ...opts.extraEnv,
    };
    // Only the stack's own API and worker carry the bank's files: a test's own processes (their own
    // task queues) would otherwise take the bank-file schedules to their queue. A test that wants
    // them adds `bankEnv`.
    const bankEnv = bank ? { ...bankFileEnv(bank), ...opts.bankEnv } : {};
    const worker = startProcess('worker', path.join(root, 'workers/main.ts'), { ...env, ...bankEnv }, opts.logDir);
    const api = startProcess('api', path.join(root, 'src/main/api.ts'), { ...env, ...bankEnv, PORT: String(apiPort) }, opts.logDir);
    started.push(() => Promise.all([api, worker].map(stopProcess)).then(() => undefined));
    // Minutes, not seconds: on a loaded two-core machine (a CI runner beside other work) the API's
    // start (TypeScript compiled as it loads) has taken more than one.
    await waitUntilReady(`http://127.0.0.1:${apiPort}/readyz`, api, 180_000);
    await waitForPoller(temporalAddress, env.TEMPORAL_TASK_QUEUE, worker, 180_000);

    const info: StackInfo = {
      apiUrl: `http://127.0.0.1:${apiPort}`,
      databaseUrl,
      temporalAddress,
      namespace: 'default',
      taskQueue: env.TEMPORAL_TASK_QUEUE,
      encryptionKey: env.DATA_ENCRYPTION_KEY,
      redisUrl: env.REDIS_URL,
      processEnv: env,
      logDir: opts.logDir,
      ...(bank ? { bankRoot: bank.root, bankEnv } : {}),
    };
    const stop = async (keepDatabase = false) => {
      await stopStarted();
      if (!keepDatabase) await adminQuery(`drop database if exists ${dbName} with (force)`);
    };
    return { info, stop, processes: { api, worker } };
  } catch (err) {
    await stopStarted();
    await adminQuery(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    throw err;
  }
}

/**
 * The live ACH and SEPA rails through the bank's files on the test SFTP server: windows every 2 s,
 * the outbox read every second, entries settled 10 s after their window (the business day, shortened).
 */
function bankFileEnv(bank: SftpServer): Record<string, string> {
  return {
    RAIL_PROVIDERS: 'ach=bank_files,ach_push=bank_files,ach_same_day=bank_files,sepa=bank_files',
    BANK_SFTP_HOST: bank.host, BANK_SFTP_PORT: String(bank.port), BANK_SFTP_USER: bank.username,
    BANK_SFTP_PRIVATE_KEY_FILE: bank.privateKeyFile, BANK_SFTP_HOST_KEY: bank.hostKey,
    ACH_ODFI_ROUTING: TEST_ODFI.routing, ACH_ODFI_NAME: TEST_ODFI.name, ACH_COMPANY_ID: TEST_ODFI.companyId, ACH_COMPANY_NAME: TEST_ODFI.companyName,
    ACH_COLLECTION_ACCOUNT: TEST_ODFI.collectionAccount,
    SEPA_DEBTOR_NAME: TEST_SEPA_ACCOUNT.name, SEPA_DEBTOR_IBAN: TEST_SEPA_ACCOUNT.iban, SEPA_DEBTOR_BIC: TEST_SEPA_ACCOUNT.bic,
    // Settled 10 s after the window: the bank's rejections (written within a second, read by the next
    // outbox poll: up to 5 s on a loaded CI machine) come before, as a bank's come before its settlement day.
    BANK_FILE_WINDOW_SECONDS: '2', BANK_OUTBOX_POLL_SECONDS: '1', BANK_FILE_SETTLEMENT_SECONDS: '10',
    // The daily reconciliation at 08:00 on 29 February only: the tests run it themselves, and no scheduled run lands among their days.
    RECONCILIATION_HOURS: '0 8 29 2 *',
  };
}

/** The platform's SEPA account at the test bank. */
export const TEST_SEPA_ACCOUNT = { name: 'FINPLATFORM EUROPE', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };

/** The platform's company at the test bank. */
export const TEST_ODFI = { routing: '091000019', name: 'TEST ODFI BANK', companyId: '1234567890', companyName: 'FINPLATFORM', collectionAccount: '9000012345' };

/** The pinned Temporal CLI dev server (in-memory SQLite) with our search attributes, as tests and benchmarks run it. */
export function startTestTemporalServer(port: number) {
  const cli = resolveTemporalCli();
  if (!cli) throw new Error('Temporal CLI not found: run `npm run temporal:install` (needs Go) or set TEMPORAL_CLI_PATH');
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ip: '127.0.0.1',
      port,
      namespace: 'default',
      searchAttributes: ALL_SEARCH_ATTRIBUTES,
      extraArgs: ['--log-level', 'error'],
    },
  });
}

/** One statement on the server's admin database (creating and dropping databases). */
export async function adminQuery(sql: string) {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

export function stopProcess(p: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGTERM');
    // A profiled process (STACK_NODE_ARGS) writes its profile once its stop has finished: let it.
    setTimeout(() => p.kill('SIGKILL'), process.env.STACK_NODE_ARGS ? 60_000 : 10_000).unref();
  });
}

/** Processes this run started: none may outlive it, even when the run ends abruptly (Ctrl-C, a crash). */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export function startProcess(name: string, entry: string, env: NodeJS.ProcessEnv, logDir: string): ChildProcess {
  const out = fs.openSync(path.join(logDir, `${name}.log`), 'w');
  // STACK_NODE_ARGS (for example `--cpu-prof --cpu-prof-dir=prof`) go to the API and worker processes;
  // Node refuses profiling flags in NODE_OPTIONS.
  const nodeArgs = (env.STACK_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', entry], { env, stdio: ['ignore', out, out] });
  yieldToServices(child.pid);
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) process.stderr.write(`stack: ${name} exited with ${code}; see ${logDir}/${name}.log\n`);
  });
  return child;
}

/**
 * Under `npm test` (TEST_NICENESS, set by the global setup) the API and worker processes a test
 * starts run at a lower CPU priority than the services they use: on two cores a burst of test work
 * otherwise starves the Temporal dev server, whose one SQLite connection then lets every caller's
 * deadline pass at once (seen in CI as ten seconds of `interrupted` and 500s). In production the
 * orchestrator runs on hosts of its own. Benchmarks start their processes without it.
 */
export function yieldToServices(pid: number | undefined) {
  const niceness = Number(process.env.TEST_NICENESS ?? 0);
  if (!pid || !niceness) return;
  try {
    os.setPriority(pid, niceness);
  } catch {
    // The process has already exited: nothing to lower.
  }
}

export async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited (${child.exitCode}) before ${url} was ready`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

/**
 * The worker is ready when Temporal sees it polling its task queue. Only for a worker's first start
 * on its queue: the server remembers a killed worker's polls for a while.
 */
export async function waitForPoller(address: string, taskQueue: string, child: ChildProcess, timeoutMs: number) {
  const connection = await Connection.connect({ address });
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode})`);
      const res = await connection.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      if ((res.pollers ?? []).length > 0) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`no worker polled ${taskQueue} within ${timeoutMs} ms`);
  } finally {
    await connection.close();
  }
}

/** anvil's well-known development mnemonic: its first accounts are funded on every local chain. */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';

/** Ports this test process has handed out: never handed out twice, though nothing holds them meanwhile. */
const handedOut = new Set<number>();

/**
 * `count` consecutive free ports (for the anvil nodes, one per chain), below Linux's ephemeral range
 * (32768–60999): a port the OS hands out meanwhile to a connection or to a server that asked for
 * any port (the Temporal dev server's own services) cannot be one of these before our server binds
 * it. A port asked of the OS (port 0) could: a CI run saw `npm start` fail with EADDRINUSE on one.
 */
export async function freePortRange(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Below Linux's ephemeral ports (32768 up); the e2e-alone run, beside the others, draws from
    // ports of its own (TEST_PORTS_FROM, set by its global setup), so no two runs race for one.
    const from = Number(process.env.TEST_PORTS_FROM ?? 20_000);
    const base = from + Math.floor(Math.random() * 10_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if (ports.some((p) => handedOut.has(p))) continue;
    const free = await Promise.all(ports.map(isFree));
    if (free.every(Boolean)) {
      for (const p of ports) handedOut.add(p);
      return base;
    }
  }
  throw new Error(`no ${count} consecutive free ports`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A free port for one server, chosen as freePortRange chooses. */
export function freePort(): Promise<number> {
  return freePortRange(1);
}

/** A developer on the enterprise plan with limits out of the way, and its sandbox secret key. */
export async function createUnlimitedKey(databaseUrl: string): Promise<string> {
  return (await createUnlimitedKeys(databaseUrl, ['sandbox']))[0]!;
}

/** One developer without rate limits, with a secret key per environment asked for. */
export async function createUnlimitedKeys(databaseUrl: string, environments: ('sandbox' | 'production')[]): Promise<string[]> {
  const db = createDb(databaseUrl, 1);
  try {
    const dev = await createDeveloper(db, { name: 'bench', rateLimitPerSecond: 1_000_000, dailyQuota: 1_000_000_000 });
    const keys: string[] = [];
    for (const environment of environments) keys.push((await createApiKey(db, { developerId: dev.id, environment, kind: 'secret', plan: 'enterprise' })).key);
    return keys;
  } finally {
    await db.destroy();
  }
}
