// One measured run of the transfer-shaped workflow (bench/ceiling/workflow.ts) against a Temporal
// server: `clients` loops each start a workflow and send its deposit (an Update), for `durationS` seconds
// after an unmeasured warm-up, one worker in this process running them. What `bench:temporal-ceiling` prints, and what
// `bench:transfers` measures right before its transfers, on the same dev server, as its ceiling.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type InjectedSinks } from '@temporalio/worker';
import { turnOffWorkflowStackTraces } from '../../workers/create-worker';
import { cpuSeconds, cpuSnapshot } from '../cpu';
import { percentile } from '../stats';
import { createCeilingActivities } from './activities';
import { CurrencyAttr, CustomerIdAttr, DestinationRailAttr, SourceRailAttr, TransferStateAttr } from '../../src/temporal/search-attributes';
import { deposit, type CeilingSinks, type transferShapedWorkflow } from './workflow';

export interface CeilingResult {
  started: number;
  /** Completed workflows per second, first start → last completion. */
  perSecond: number;
  startP50: number;
  startP99: number;
  /** CPU seconds per kind of process over the phase. */
  cpu: Record<string, number>;
  /** One measured workflow's id, for the counts of its history. */
  sampleWorkflowId: string;
}

export async function measureCeiling(opts: {
  address: string; clients: number; durationS: number; kinds: Record<string, RegExp>; withoutLocalActivities?: boolean;
  /** Seconds of the same load before the measured `durationS` (default 3). */
  warmUpS?: number;
}): Promise<CeilingResult> {
  const nativeConnection = await NativeConnection.connect({ address: opts.address });
  const connection = await Connection.connect({ address: opts.address });
  const client = new Client({ connection, namespace: 'default' });
  const taskQueue = `ceiling-${process.pid}-${randomUUID().slice(0, 8)}`;
  // Its workflow threads as the platform's worker runs them (WORKFLOW_STACK_TRACES, off by default),
  // so that the ratios compare like with like.
  if (process.env.WORKFLOW_STACK_TRACES !== 'on') turnOffWorkflowStackTraces();
  // Each workflow's first task, done: its deposit may come (as a transfer's comes after it waits).
  const awaitingFunds = new Map<string, () => void>();
  const sinks: InjectedSinks<CeilingSinks> = {
    bench: { awaitingFunds: { fn: (info) => awaitingFunds.get(info.workflowId)?.(), callDuringReplay: false } },
  };
  const worker = await Worker.create({
    connection: nativeConnection, namespace: 'default', taskQueue,
    workflowsPath: require.resolve('./workflow'), activities: createCeilingActivities(), sinks,
  });
  const running = worker.run();
  try {
    // `clients` loops, each starting a workflow and sending its deposit until `seconds` have passed.
    const load = async (seconds: number) => {
      const started: string[] = [];
      const startLatencies: number[] = [];
      const until = Date.now() + seconds * 1000;
      await Promise.all(Array.from({ length: opts.clients }, async () => {
        while (Date.now() < until) {
          const id = `ceiling-${randomUUID()}`;
          const waiting = new Promise<void>((resolve) => awaitingFunds.set(id, resolve));
          const s = performance.now();
          const handle = await client.workflow.start<typeof transferShapedWorkflow>('transferShapedWorkflow', {
            workflowId: id, taskQueue, args: [{ returnWindowMs: 1, withoutLocalActivities: opts.withoutLocalActivities }],
            // What a transfer's start carries (src/transfers/workflow-client.ts).
            typedSearchAttributes: [
              { key: CustomerIdAttr, value: 'customer_ceiling' }, { key: TransferStateAttr, value: 'awaiting_funds' },
              { key: SourceRailAttr, value: 'pix' }, { key: DestinationRailAttr, value: 'pix' }, { key: CurrencyAttr, value: 'brl' },
            ],
            staticSummary: '1000 minor units of brl: pix → pix (brl)',
            workflowIdConflictPolicy: 'USE_EXISTING',
          });
          startLatencies.push(performance.now() - s);
          // As the rail provider's webhook offers a deposit to its transfer (src/transfers/workflow-client.ts).
          await waiting;
          awaitingFunds.delete(id);
          const railPaymentId = randomUUID();
          await handle.executeUpdate(deposit, { args: [{ railPaymentId }], updateId: `deposit:${railPaymentId}` });
          started.push(id);
        }
      }));
      await Promise.all(started.map((id) => client.workflow.getHandle(id).result()));
      return { started, startLatencies };
    };
    // Unmeasured first: the platform's worker and API run warm (JIT-compiled, their workflow thread
    // started), so the ceiling's worker, workflow thread and client are warmed up the same way.
    await load(opts.warmUpS ?? 3);
    const t0 = Date.now();
    const cpuBefore = cpuSnapshot();
    const { started, startLatencies } = await load(opts.durationS);
    const seconds = (Date.now() - t0) / 1000;
    const cpu = cpuSeconds(cpuBefore, cpuSnapshot(), opts.kinds);
    startLatencies.sort((a, b) => a - b);
    return {
      started: started.length, perSecond: started.length / seconds, startP50: percentile(startLatencies, 50), startP99: percentile(startLatencies, 99), cpu,
      sampleWorkflowId: started[0]!,
    };
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await nativeConnection.close();
  }
}
