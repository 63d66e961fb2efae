import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { CHAIN_RAILS } from '../../src/domain/rails';
import { startWalletWatcher } from '../../src/wallets/workflow-client';
import { stack, temporalClient } from './index';
import { freePort, startProcess, stopProcess, waitForPoller, waitUntilReady } from './stack';

const root = path.join(__dirname, '../..');

/**
 * An API process, and a worker the test starts and kills, of their own task queue beside the stack's
 * (same database, Temporal and chains): for tests of crashes. The API starts before the file's tests;
 * both stop after them. `name` names the queue and the log files (`api-{name}`, `worker-{name}`).
 */
export function apiAndWorkerOfTheirOwn(name: string, extraEnv: Record<string, string> | (() => Record<string, string>) = {}) {
  const taskQueue = `${name}-${process.pid}`;
  const env = () => ({ ...stack().processEnv, TEMPORAL_TASK_QUEUE: taskQueue, ...(typeof extraEnv === 'function' ? extraEnv() : extraEnv) });
  const own: { api?: ChildProcess; worker?: ChildProcess; url?: string; moreApis: ChildProcess[] } = { moreApis: [] };
  beforeAll(async () => {
    await startStackWatchers();
    const port = await freePort();
    own.url = `http://127.0.0.1:${port}`;
    own.api = startProcess(`api-${name}`, path.join(root, 'src/main/api.ts'), { ...env(), PORT: String(port) }, stack().logDir);
    // Long enough for a loaded two-core machine, where whole stacks of other test files start beside it.
    await waitUntilReady(`${own.url}/readyz`, own.api, 120_000);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([own.api, own.worker, ...own.moreApis].filter((p): p is ChildProcess => Boolean(p)).map(stopProcess));
  });
  /** Starts the worker (again, after a kill). */
  const startWorker = () => {
    own.worker = startProcess(`worker-${name}`, path.join(root, 'workers/main.ts'), env(), stack().logDir);
    return own.worker;
  };
  return {
    /** The API's base URL (once the file's tests run). */
    url: () => own.url!,
    /** The task queue of this API's workflows and this worker. */
    taskQueue,
    startWorker,
    /** Starts the worker for the first time and waits until it polls (a test's deadlines then leave out its start-up). */
    startFirstWorker: () => waitForPoller(stack().temporalAddress, taskQueue, startWorker(), 120_000),
    /**
     * Starts another API on the same queue, with its own settings on top (those an API passes to the
     * workflows it starts, such as expiries), and gives its base URL once it is ready.
     */
    startAnotherApi: async (name2: string, moreEnv: Record<string, string>) => {
      const port = await freePort();
      const api = startProcess(`api-${name}-${name2}`, path.join(root, 'src/main/api.ts'), { ...env(), ...moreEnv, PORT: String(port) }, stack().logDir);
      own.moreApis.push(api);
      await waitUntilReady(`http://127.0.0.1:${port}/readyz`, api, 120_000);
      return `http://127.0.0.1:${port}`;
    },
    /** The running worker's process. */
    worker: () => own.worker!,
    /** Kills the running worker at once, as a crash would. */
    killWorker: () => own.worker!.kill('SIGKILL'),
  };
}

/**
 * A worker of its own task queue with the stack's settings and its bank's files (an API of its own
 * would move the bank's schedules to its queue: none here), for crashes: start, kill, start again.
 * The worker starts at once; `ready` waits until it polls.
 */
export function bankFileWorkerOfItsOwn(name: string) {
  const taskQueue = `${name}-${process.pid}`;
  const start = () => startProcess(`worker-${name}`, path.join(root, 'workers/main.ts'), { ...stack().processEnv, ...stack().bankEnv, TEMPORAL_TASK_QUEUE: taskQueue }, stack().logDir);
  let worker = start();
  return {
    taskQueue,
    ready: () => waitForPoller(stack().temporalAddress, taskQueue, worker, 120_000),
    kill: async () => {
      worker.kill('SIGKILL');
      if (worker.exitCode === null && worker.signalCode === null) await new Promise((resolve) => worker.once('exit', resolve));
    },
    restart: () => (worker = start()),
    stop: () => stopProcess(worker),
  };
}

/**
 * The chains' wallet watchers are one workflow per chain for the whole stack, started by the first
 * API that creates a wallet on the chain, on that API's task queue. Started here first on the stack's
 * queue, so that a test's own API (its own queue, its worker stopped after the file) never becomes
 * their home.
 */
async function startStackWatchers() {
  const deps = {
    config: { TEMPORAL_TASK_QUEUE: stack().taskQueue, WALLET_WATCH_PERIOD_MS: Number(stack().processEnv.WALLET_WATCH_PERIOD_MS) },
    temporal: await temporalClient(),
  };
  for (const chain of CHAIN_RAILS) await startWalletWatcher(deps as Parameters<typeof startWalletWatcher>[0], chain);
}
