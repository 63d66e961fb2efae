// bench:transfers' counts: what one PIX → PIX transfer asks of PostgreSQL and Temporal, against the
// ceiling's workflow (issue 51's targets). The counting itself is test/harness/work-counts.ts, which
// test/e2e/transfer-work-counts.test.ts shares.
import { Client, Connection } from '@temporalio/client';
import type { Db } from '../src/db';
import { countTransferWork, historyCounts, type HistoryCounts, type TransferWork } from '../test/harness/work-counts';

type Api = (method: string, p: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** The database role the bench's API and worker connect as: pg_stat_statements counts by role. */
export const COUNTED_ROLE = 'fp_bench_counted';

/** `count` transfers one after the other, each carried to its workflow's end, after one more to warm up. */
export async function measureTransferWork(opts: { api: Api; body: unknown; adminDb: Db; temporalAddress: string; count: number }): Promise<TransferWork> {
  const connection = await Connection.connect({ address: opts.temporalAddress });
  const client = new Client({ connection, namespace: 'default' });
  try {
    return await countTransferWork({
      db: opts.adminDb, role: COUNTED_ROLE, client, count: opts.count,
      create: async () => {
        const created = await opts.api('POST', '/v0/transfers', opts.body);
        if (created.status !== 201) throw new Error(`transfer: ${created.status} ${JSON.stringify(created.body)}`);
        return created.body.id as string;
      },
      deposit: async (id) => {
        const deposit = await opts.api('POST', `/v0/sandbox/transfers/${id}/deposit`);
        if (deposit.status !== 200) throw new Error(`deposit: ${deposit.status} ${JSON.stringify(deposit.body)}`);
      },
    });
  } finally {
    await connection.close();
  }
}

export async function ceilingHistory(temporalAddress: string, workflowId: string): Promise<HistoryCounts> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    return await historyCounts(new Client({ connection, namespace: 'default' }), workflowId);
  } finally {
    await connection.close();
  }
}

/** The counts' table (docs/BENCHMARKS.md, the top of "Transfers"), with issue 51's targets and whether each holds. */
export function printWorkCounts(work: TransferWork, ceiling: HistoryCounts) {
  const h = work.history;
  const rows: [string, number, number | string, string, boolean][] = [
    ['SQL statements (BEGIN and COMMIT included)', work.statements, '—', '≤ 12', work.statements <= 12],
    ['transactions', work.transactions, '—', '≤ 2', work.transactions <= 2],
    ['workflow tasks', h.workflowTasks, ceiling.workflowTasks, '≤ 2', h.workflowTasks <= 2],
    ['activities + local activities', h.activities + h.localActivities, ceiling.activities + ceiling.localActivities, '≤ 2', h.activities + h.localActivities <= 2],
    ['history events', h.events, ceiling.events, '≤ ceiling + 6', h.events <= ceiling.events + 6],
    ['payload bytes in the history', h.payloadBytes, ceiling.payloadBytes, '≤ 2 × ceiling', h.payloadBytes <= 2 * ceiling.payloadBytes],
  ];
  console.log('\n| per PIX → PIX transfer | transfer | ceiling workflow | target | holds |');
  console.log('|---|---|---|---|---|');
  for (const [what, ours, theirs, target, holds] of rows) console.log(`| ${what} | ${Number(ours.toFixed(2))} | ${theirs} | ${target} | ${holds ? 'yes' : 'no'} |`);
  console.log(`\ntransfer's history: ${h.eventTypes.join(' ')}\nceiling's history: ${ceiling.eventTypes.join(' ')}`);
  console.log('\nstatements per transfer:');
  for (const s of work.byStatement) console.log(`  ${s.calls.toFixed(2)} × ${s.query.slice(0, 200)}`);
}
