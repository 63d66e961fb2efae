import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { waitFor } from '.';

// `npm start` as README.md tells a user to run it, for the tests of the embedded stack.

const repoRoot = path.join(__dirname, '../..');
const logDir = path.join(repoRoot, 'test-logs');

/** `npm start` in its own process group, as a terminal runs it, its output in test-logs/embedded-NAME.log. */
export function startNpm(env: NodeJS.ProcessEnv, name: string) {
  const out = fs.openSync(path.join(logDir, `embedded-${name}.log`), 'w');
  const child = spawn('npm', ['start'], { cwd: repoRoot, env, detached: true, stdio: ['ignore', out, out] });
  const ended: { code?: number | null; signal?: string | null } = {};
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => {
    Object.assign(ended, { code, signal });
    resolve(code);
  }));
  const log = () => fs.readFileSync(path.join(logDir, `embedded-${name}.log`), 'utf8');
  return { child, exit, log, ended };
}

export async function untilRunning(run: ReturnType<typeof startNpm>) {
  // waitFor tries again after a throw, so a start that exited is told apart after the wait, at once.
  await waitFor(async () => run.child.exitCode !== null || run.log().includes('Financial platform is running.'),
    { timeoutMs: 120_000, what: 'npm start to be running' });
  if (run.child.exitCode !== null) throw new Error(`npm start exited (${run.child.exitCode}):\n${run.log()}`);
}

export const signalGroup = (child: ChildProcess, signal: NodeJS.Signals) => signalPid(-child.pid!, signal);
export function signalPid(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(pid, signal);
  } catch {
    // no such process (group)
  }
}
/** Whether a process (or, for a negative number, any process of that group) runs; zombies do not. */
export function alive(pid: number): boolean {
  const ps = spawnSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' }).stdout;
  return ps.split('\n').some((line) => {
    const [p, g, stat] = line.trim().split(/\s+/);
    return (pid < 0 ? Number(g) === -pid : Number(p) === pid) && stat !== undefined && !stat.startsWith('Z');
  });
}

