import { startServiceProcess, type ServiceProcess } from '../embedded/service-process';

const RESTART_DELAY_MS = 1_000;

export interface SupervisedProcess {
  name: string;
  /** The pid of the running instance (undefined between a crash and its restart). */
  pid: () => number | undefined;
  restarts: () => number;
  stop: () => Promise<void>;
}

/**
 * Runs one of the platform's production entry points (`src/main/api.ts`, `workers/main.ts`) and
 * starts it again a second after it dies, as an orchestrator's restart policy would (compose:
 * `restart: unless-stopped`). Its pid file lets the next start end an instance a killed supervisor
 * left behind.
 */
export async function superviseNodeProcess(opts: {
  name: string; entry: string; env: NodeJS.ProcessEnv; logFile: string; pidFile: string;
  onRestart?: (name: string) => void;
}): Promise<SupervisedProcess> {
  let current: ServiceProcess | undefined;
  let stopping = false;
  let restarts = 0;
  const start = async () => {
    current = await startServiceProcess({
      command: process.execPath, args: ['--import', 'tsx', opts.entry], env: opts.env, logFile: opts.logFile, pidFile: opts.pidFile,
    });
    const instance = current;
    void instance.exit.then(async () => {
      if (stopping || current !== instance) return;
      current = undefined;
      await new Promise((r) => setTimeout(r, RESTART_DELAY_MS));
      if (stopping) return;
      restarts += 1;
      opts.onRestart?.(opts.name);
      await start();
    });
  };
  await start();
  return {
    name: opts.name,
    pid: () => (current && !current.exited() ? current.pid : undefined),
    restarts: () => restarts,
    stop: async () => {
      stopping = true;
      await current?.stop();
    },
  };
}
