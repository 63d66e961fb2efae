import { existsSync } from 'node:fs';
import path from 'node:path';
import type { WorkerOptions as ThreadOptions } from 'node:worker_threads';
import { DefaultLogger, GracefulShutdownPeriodExpiredError, NativeConnection, Runtime, Worker, type LogEntry, type LogLevel } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import type { Config } from '../src/config';
import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import type { KeyVault } from '../src/keys/key-vault';
import type { Client } from '@temporalio/client';
import { createMoneyProviders } from '../src/providers';
import { bankFileActivityDeps } from '../activities/bank-files';
import { sandboxBankOf } from '../src/embedded/sandbox-bank';
import type { SanctionsScreener } from '../src/sanctions/screener';
import type { Logger } from '../src/logger';
import { reportWhileWaiting } from '../src/main/run';
import { encryptedDataConverter } from '../src/temporal/payload-codec';
import type { temporalAuthOptions } from '../src/temporal/client';
import { chainWatchTaskQueue, webhookTaskQueue } from '../src/temporal/task-queues';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from './workflow-bundle';
import { classifyActivityFailures } from '../activities/failures';

/** What the activities need, from the configuration and the process's shared resources. */
export function activityDepsFromConfig(
  config: Config, shared: { db: Db; cipher: DataCipher; keys: KeyVault; sanctions: SanctionsScreener; temporal: Client; log: Logger },
): ActivityDeps {
  const providers = createMoneyProviders(config, shared.db, shared.keys);
  return {
    bankFiles: bankFileActivityDeps(config, { ...shared, ...providers }),
    sandboxBank: sandboxBankOf(config),
    db: shared.db, cipher: shared.cipher, sanctions: shared.sanctions,
    idempotencyRetentionHours: config.IDEMPOTENCY_RETENTION_HOURS,
    providers,
    // Route deposits become transfers in the chain watchers' looks (src/payment-routes/carry-deposits.ts).
    routeTransfers: { ...providers, db: shared.db, config, temporal: shared.temporal, log: shared.log },
    transferLimits: { reviewThresholdUsd: config.TRANSFER_REVIEW_THRESHOLD_USD, dailyLimitUsd: config.TRANSFER_DAILY_LIMIT_USD },
    // Every second on a sped-up sandbox clock (local chains mine a block a second); else every 5 s.
    chainPollMs: config.SANDBOX_TIME_SCALE > 1 ? 500 : 5_000,
    mpcNonceCheckMs: config.MPC_NONCE_CHECK_MS,
    strayDepositWatchMs: config.STRAY_DEPOSIT_WATCH_DAYS * 24 * 3600_000,
    webhookDelivery: {
      retryBaseMs: config.WEBHOOK_RETRY_BASE_MS, retryWindowMs: config.WEBHOOK_RETRY_WINDOW_HOURS * 3600_000,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS, pollMs: config.WEBHOOK_POLL_MS,
      idlePollMs: config.WEBHOOK_IDLE_POLL_MS,
    },
  };
}

/**
 * Stops a process given a bundle path with no file there. Its entry point calls this first, before
 * the slow part of its start (servers, the sanctions lists), so the mistake shows at once.
 */
export function requireWorkflowBundle(workflowBundlePath: string | undefined) {
  if (workflowBundlePath && !existsSync(workflowBundlePath)) {
    throw new Error(`WORKFLOW_BUNDLE_PATH: no workflow bundle at ${workflowBundlePath} (build it with \`npm run build:workflows -- ${workflowBundlePath}\`)`);
  }
}

/**
 * A stop waits this long for tasks in flight (activities are told to cancel at once), then gives up
 * on them, so that a stuck task never keeps the process from ending.
 */
const SHUTDOWN_FORCE_TIME = '15 seconds';

const NO_STACK_TRACES_PRELOAD = path.join(__dirname, 'workflow-thread-no-stack-traces.cjs');
/** V8 flags, which hold for the whole process and which Node refuses in a worker thread: those `STACK_NODE_ARGS` passes for perf's symbol maps, V8's optimization and GC traces, and the young generation's size. */
const PROCESS_ONLY_FLAGS = /^--(perf-basic-prof|perf-basic-prof-only-functions|perf-prof|interpreted-frames-native-stack|trace-opt|trace-deopt|trace-gc|max-semi-space-size=\d+)$/;
let stackTracesTurnedOff = false;

/**
 * The SDK collects a stack trace for every promise workflow code creates (a V8 promise hook in its
 * workflow thread), for the stack-trace query: about a fifth of the worker's CPU per transfer. The
 * SDK has no option for it; its workflow threads, started from here on, preload a file that makes
 * the hook unavailable there, and the SDK runs as it does where V8 has none (the query then answers
 * that stack traces are off).
 */
export function turnOffWorkflowStackTraces() {
  if (stackTracesTurnedOff) return;
  stackTracesTurnedOff = true;
  // The module object the SDK reads Worker from (an import here would be a copy of it).
  const threads = process.getBuiltinModule('node:worker_threads');
  threads.Worker = class WorkflowThreadWithoutStackTraces extends threads.Worker {
    constructor(file: string | URL, options: ThreadOptions = {}) {
      const inherited = (options.execArgv ?? process.execArgv).filter((flag) => !PROCESS_ONLY_FLAGS.test(flag));
      super(file, { ...options, execArgv: [...inherited, '--require', NO_STACK_TRACES_PRELOAD] });
    }
  };
}

let runtimeInstalled = false;

/**
 * The SDK's runtime, once per process: its log, less the notice that an activity-only worker polls no
 * workflow tasks (the chain-watch and webhook queues are activity-only by design), and its metrics for
 * Prometheus when an address is given (docs/DEPLOYMENT.md).
 */
/** Our log levels as the SDK's logger names them. */
const SDK_LOG_LEVELS: Record<string, LogLevel> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR', fatal: 'ERROR', silent: 'ERROR' };

function installWorkerRuntime(metricsAddress: string | undefined, level: LogLevel = 'INFO') {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const sdkLog = new DefaultLogger(level);
  const logger = new DefaultLogger(level, (entry: LogEntry) => {
    if (!entry.message.startsWith('No workflows registered')) sdkLog.log(entry.level, entry.message, entry.meta);
  });
  Runtime.install({ logger, ...(metricsAddress && { telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } }) });
}

/** The worker's own settings, from the configuration. */
export function workerSettings(config: Config) {
  return {
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    /**
     * A bundle from `npm run build:workflows` (checked by the entry point: requireWorkflowBundle);
     * without one the workflow code is bundled at start.
     */
    workflowBundlePath: config.WORKFLOW_BUNDLE_PATH,
    /** The SDK's stack-trace collection in workflow code (WORKFLOW_STACK_TRACES); off by default. */
    workflowStackTraces: config.WORKFLOW_STACK_TRACES === 'on',
    /** How long a workflow's next task waits for this worker (its cache) before any worker may take it. */
    stickyQueueTimeoutMs: config.WORKER_STICKY_QUEUE_TIMEOUT_SECONDS * 1000,
  };
}
type WorkerSettings = ReturnType<typeof workerSettings>;

/**
 * One worker polls the platform task queue for every workflow and activity, and two more, on the same
 * connection, the deposit watchers' and webhook delivery's queues (src/temporal/task-queues.ts). All run once created.
 */
export async function createWorker(opts: WorkerSettings & {
  address: string;
  /** TLS and an API key for Temporal Cloud (temporalAuthOptions). */
  auth?: ReturnType<typeof temporalAuthOptions>;
  activityDeps: ActivityDeps;
  log: Logger;
  /** The SDK's Prometheus metrics on this address (TEMPORAL_METRICS_ADDRESS). */
  metricsAddress?: string;
  /** The least the SDK's own log shows (pino's level names; `npm start`: warn unless LOG_LEVEL says otherwise). */
  sdkLogLevel?: string;
}) {
  installWorkerRuntime(opts.metricsAddress, SDK_LOG_LEVELS[opts.sdkLogLevel ?? 'info'] ?? 'INFO');
  if (!opts.workflowStackTraces) turnOffWorkflowStackTraces();
  const connection = await NativeConnection.connect({ ...opts.auth, address: opts.address });
  const activities = createActivities(opts.activityDeps);
  // Payloads encrypted as the clients encrypt them (src/temporal/payload-codec.ts).
  const dataConverter = encryptedDataConverter(opts.activityDeps.cipher);
  /** A worker of activities that hold their slot while they wait, on a task queue of their own. */
  const waitingActivitiesWorker = (taskQueue: string, queueActivities: Partial<typeof activities>) => Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue,
    dataConverter,
    activities: queueActivities,
    interceptors: { activity: [classifyActivityFailures] },
    maxConcurrentActivityTaskExecutions: 2_000,
    shutdownForceTime: SHUTDOWN_FORCE_TIME,
  });
  const workers = [
    await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      dataConverter,
      ...(opts.workflowBundlePath
        ? { workflowBundle: { codePath: opts.workflowBundlePath } }
        : { workflowsPath: WORKFLOWS_PATH }),
      interceptors: {
        activity: [classifyActivityFailures],
        // A prebuilt bundle carries its interceptors (workflow-bundle.ts).
        ...(opts.workflowBundlePath ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
      },
      activities,
      stickyQueueScheduleToStartTimeout: opts.stickyQueueTimeoutMs,
      maxConcurrentActivityTaskExecutions: 200,
      shutdownForceTime: SHUTDOWN_FORCE_TIME,
    }),
    // A watcher mostly sleeps between two looks at the chain, and each webhook endpoint's delivery
    // loop mostly waits for events: many of either fit in one process.
    await waitingActivitiesWorker(chainWatchTaskQueue(opts.taskQueue), {
      watchChainDeposit: activities.watchChainDeposit, watchWalletTransfers: activities.watchWalletTransfers,
    }),
    await waitingActivitiesWorker(webhookTaskQueue(opts.taskQueue), { deliverWebhooks: activities.deliverWebhooks }),
  ];
  const running = Promise.all(workers.map((w) => w.run().catch((err) => {
    if (!(err instanceof GracefulShutdownPeriodExpiredError)) throw err;
    // What was still in flight is not lost: Temporal gives it to another worker after its timeout.
    opts.log.error({ task_queue: w.options.taskQueue, ...w.getStatus() }, `worker stop forced after ${SHUTDOWN_FORCE_TIME}`);
  }))).then(() => undefined);
  return {
    running,
    /** Lets in-flight tasks finish, then closes the connection. The SDK itself starts the shutdown on SIGINT/SIGTERM. */
    stop: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      // A shutdown that takes long says, every 5 s, what each worker still waits for.
      await reportWhileWaiting(running, () => opts.log.warn(
        { workers: workers.filter((w) => w.getState() !== 'STOPPED').map((w) => ({ task_queue: w.options.taskQueue, ...w.getStatus() })) },
        'worker still stopping'));
      await connection.close();
    },
  };
}
