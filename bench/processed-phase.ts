import { sql } from 'kysely';
import type { Db } from '../src/db';
import { cpuSeconds, cpuSnapshot } from './cpu';
import { percentile } from './stats';

/** What a phase of transfers measured: processed transfers/s (first created → last processed), latency, CPU per transfer. */
export interface ProcessedPhase {
  processed: number;
  perSecond: number;
  p50: number;
  p99: number;
  cpuMs: number;
}

/**
 * Waits (up to 10 minutes) until every transfer of `ids` is processed, then measures the phase: CPU
 * of the `kinds` of processes since `cpuBefore`, and each transfer's creation → `transfer.payment_processed`.
 */
export async function processedPhase(db: Db, ids: string[], cpuBefore: ReturnType<typeof cpuSnapshot>, kinds: Record<string, RegExp>): Promise<ProcessedPhase> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const { n } = (await sql<{ n: string }>`select count(*)::text as n from transfers where id = any(${ids}) and state = 'payment_processed'`.execute(db)).rows[0]!;
    if (Number(n) === ids.length) break;
    if (Date.now() > deadline) throw new Error(`${n} of ${ids.length} transfers processed after 10 minutes`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const used = cpuSeconds(cpuBefore, cpuSnapshot(), kinds);
  const done = (await sql<{ created_at: Date; processed_at: Date }>`
    select t.created_at, e.created_at as processed_at from transfers t
    join events e on e.object_id = t.id and e.type = 'transfer.payment_processed' where t.id = any(${ids})`.execute(db)).rows;
  const latencies = done.map((r) => r.processed_at.getTime() - r.created_at.getTime()).sort((a, b) => a - b);
  const first = Math.min(...done.map((r) => r.created_at.getTime()));
  const last = Math.max(...done.map((r) => r.processed_at.getTime()));
  const cpu = Object.keys(kinds).reduce((total, k) => total + (used[k] ?? 0), 0);
  return { processed: done.length, perSecond: done.length / ((last - first) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuMs: (cpu * 1000) / done.length };
}
