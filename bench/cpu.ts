import fs from 'node:fs';

/** CPU seconds each process has used so far (Linux /proc), for "who used the cores" lines in benchmarks. */
export function cpuSnapshot() {
  const processes = new Map<string, { cpuSeconds: number; command: string }>();
  const tick = 100; // USER_HZ on Linux
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      processes.set(pid, { cpuSeconds: (Number(fields[11]) + Number(fields[12])) / tick, command });
    } catch {
      // the process ended meanwhile
    }
  }
  return { at: Date.now(), processes };
}

/** CPU seconds each kind of process used between two snapshots (`other` for the rest). */
export function cpuSeconds(before: ReturnType<typeof cpuSnapshot>, after: ReturnType<typeof cpuSnapshot>, kinds: Record<string, RegExp>): Record<string, number> {
  const used: Record<string, number> = {};
  for (const [pid, p] of after.processes) {
    const seconds = p.cpuSeconds - (before.processes.get(pid)?.cpuSeconds ?? 0);
    if (seconds <= 0) continue;
    const kind = Object.entries(kinds).find(([, re]) => re.test(p.command))?.[0] ?? 'other';
    used[kind] = (used[kind] ?? 0) + seconds;
  }
  return used;
}

/** Share of one core each kind of process used between two snapshots, busiest first. */
export function cpuShares(before: ReturnType<typeof cpuSnapshot>, after: ReturnType<typeof cpuSnapshot>, kinds: Record<string, RegExp>) {
  const seconds = (after.at - before.at) / 1000;
  return Object.entries(cpuSeconds(before, after, kinds)).sort((a, b) => b[1] - a[1])
    .map(([kind, used]) => `${kind} ${Math.round((used / seconds) * 100)} %`).join(', ');
}
