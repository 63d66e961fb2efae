import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const STOP_GRACE_MS = 10_000;

export interface ServiceProcess {
  pid: number;
  /** Resolves when the process exits, however it exits. */
  exit: Promise<void>;
  /** Whether the process has exited, and the tail of what it wrote to stderr (for error messages). */
  exited: () => boolean;
  stderrTail: () => string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once the process is gone. */
  stop: () => Promise<void>;
}

/**
 * Starts a server we run beside our process (the Temporal dev server, anvil); it is ended when our
 * process exits, however it exits short of SIGKILL.
 *
 * With a `pidFile` (what `npm start` keeps), the server gets its own process group: the terminal's
 * Ctrl-C then reaches only our process, which stops the API and the worker first and these servers
 * last, instead of all of them at once (the worker would retry its last calls against a server
 * already gone). Such a server outlives us if we are killed outright, so its pid and ours are kept
 * in the file and the next start ends one left behind by a process that is gone; while that process
 * still runs (a second start on the same DATA_DIR), it refuses to start. Without a pid file (tests),
 * the server is a plain child process.
 */
export async function startServiceProcess(opts: {
  command: string; args: string[]; pidFile?: string;
  /** Its environment (default: ours) and a file its output is appended to (default: stderr kept in memory only). */
  env?: NodeJS.ProcessEnv; logFile?: string;
  /** The ports it will listen on, each with the setting that moves it: checked free once a leftover of ours is ended. */
  ports?: PortClaim[];
}): Promise<ServiceProcess> {
  const { pidFile } = opts;
  if (pidFile) await endLeftoverProcess(pidFile, opts.command);
  for (const claim of opts.ports ?? []) await ensurePortFree(claim);
  const log = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(opts.command, opts.args, { detached: pidFile !== undefined, env: opts.env, stdio: ['ignore', log, log === 'ignore' ? 'pipe' : log] });
  if (typeof log === 'number') fs.closeSync(log);
  if (child.pid === undefined) throw new Error(`could not start ${opts.command}`);
  const pid = child.pid;
  if (pidFile) {
    fs.mkdirSync(path.dirname(pidFile), { recursive: true });
    fs.writeFileSync(pidFile, `${pid} ${process.pid}\n`);
  }

  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  // An exit we did not plan (an uncaught error, process.exit on a second Ctrl-C) still ends it.
  const killOnExit = () => {
    if (!exited()) child.kill('SIGTERM');
  };
  // One listener per server: a cluster stack runs a dozen.
  process.setMaxListeners(Math.max(process.getMaxListeners(), 50));
  process.on('exit', killOnExit);
  void exit.then(() => process.off('exit', killOnExit));

  return {
    pid,
    exit,
    exited,
    stderrTail: () => (opts.logFile ? fileTail(opts.logFile) : stderr.trim()),
    stop: async () => {
      process.off('exit', killOnExit);
      if (!exited()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exit;
        clearTimeout(timer);
      }
      if (pidFile) fs.rmSync(pidFile, { force: true });
    },
  };
}

/**
 * Waits until the server answers `probe` (tried every 100 ms, `attempts` times); fails at once, with
 * the tail of its output, if it exits first. `what` names it in errors ("anvil at http://…").
 */
export async function waitUntilAnswering(node: ServiceProcess, what: string, probe: () => Promise<unknown>, attempts = 300): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (node.exited()) throw new Error(`${what} exited: ${node.stderrTail()}`);
    try {
      await probe();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not answer: ${node.stderrTail()}`);
}

function fileTail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').slice(-4000).trim();
  } catch {
    return '';
  }
}

/**
 * Claims DATA_DIR for this process: two stacks on one data directory would open the same embedded
 * database and Temporal history at once. Returns the release.
 */
export function lockDataDir(dataDir: string): () => void {
  const lockFile = path.join(dataDir, 'platform.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' }); // fails if the file exists
      return () => fs.rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(fs.readFileSync(lockFile, 'utf8').trim());
    if (holder > 0 && isRunning(holder, 'node')) {
      throw new Error(`${dataDir} is in use by another start (process ${holder}); stop it first, or set DATA_DIR. `
        + `If that process is not one, delete ${lockFile}`);
    }
    fs.rmSync(lockFile, { force: true }); // left by a start that was killed
  }
  throw new Error(`${dataDir} is being claimed by another start at the same moment`);
}

/** A port a server of ours will listen on, what the server is, and the setting that moves it. */
export interface PortClaim {
  port: number;
  what: string;
  setting: string;
}

/**
 * Stops the start with a clear message when another program (another stack's node, say) already
 * listens on the port: a second stack would otherwise talk to the first one's server and diverge
 * from it as soon as either stops.
 */
export async function ensurePortFree(claim: PortClaim): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port: claim.port, host: '127.0.0.1', exclusive: true }, () => probe.close(() => resolve(true)));
  });
  if (!free) {
    throw new Error(`${claim.what} cannot listen on port ${claim.port}: another program holds it (another start of the platform, with another DATA_DIR?). `
      + `Stop it, or set ${claim.setting} to a free port`);
  }
}

/** Ends the server a pid file names if it is still running and the process that started it is gone. */
export async function endLeftoverProcess(pidFile: string, command: string) {
  let pid: number, owner: number;
  try {
    [pid, owner] = fs.readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 0 && isRunning(pid, command)) {
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isRunning(owner, 'node')) {
      throw new Error(`${path.basename(command)} (pid ${pid}) is already run by process ${owner} for this data directory (${path.dirname(pidFile)})`);
    }
    signal(pid, 'SIGTERM');
    for (let waited = 0; isRunning(pid, command); waited += 100) {
      if (waited >= STOP_GRACE_MS) signal(pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  fs.rmSync(pidFile, { force: true });
}

function signal(pid: number, name: NodeJS.Signals) {
  try {
    process.kill(pid, name);
  } catch {
    // it has just exited
  }
}

function isRunning(pid: number, command: string): boolean {
  // `ps` rather than /proc so this works on macOS too; a zombie shows as defunct.
  const ps = spawnSync('ps', ['-o', 'stat=,args=', '-p', String(pid)], { encoding: 'utf8' });
  const line = ps.status === 0 ? ps.stdout.trim() : '';
  return line !== '' && !line.startsWith('Z') && line.includes(command);
}
