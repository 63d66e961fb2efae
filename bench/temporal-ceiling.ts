// `npm run bench:temporal-ceiling`: how many transfer-shaped workflows per second the Temporal CLI dev
// server and one worker carry on this machine when the workflow does no work at all (no database,
// no API, no rails): the same start, signal, timers, local-activity markers and search-attribute
// updates as a real transfer. The ceiling that `npm run bench:transfers` can approach, not pass.
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { createCeilingActivities } from './ceiling/activities';
import type { transferShapedWorkflow } from './ceiling/workflow';
import { freePort, startTestTemporalServer } from '../test/harness/stack';
import { cpuShares, cpuSnapshot } from './cpu';
import { percentile } from './stats';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 20);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);

async function main() {
  // The same dev server and flags as the test harness and bench:transfers (in-memory SQLite).
  const env = await startTestTemporalServer(await freePort());
  const taskQueue = `ceiling-${process.pid}`;
  const worker = await Worker.create({
    connection: env.nativeConnection, namespace: 'default', taskQueue,
    workflowsPath: require.resolve('./ceiling/workflow'), activities: createCeilingActivities(),
  });
  const running = worker.run();
  try {
    const started: string[] = [];
    const startLatencies: number[] = [];
    const until = Date.now() + DURATION_S * 1000;
    const t0 = Date.now();
    const cpuBefore = cpuSnapshot();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < until) {
        const id = `ceiling-${randomUUID()}`;
        const s = performance.now();
        const handle = await env.client.workflow.start<typeof transferShapedWorkflow>('transferShapedWorkflow', {
          workflowId: id, taskQueue, args: [{ returnWindowMs: 1, withoutLocalActivities: process.env.BENCH_WITHOUT_LOCAL_ACTIVITIES === '1' }],
        });
        startLatencies.push(performance.now() - s);
        await handle.signal('deposit');
        started.push(id);
      }
    }));
    // Sustained rate: started workflows ÷ (first start → last completion).
    await Promise.all(started.map((id) => env.client.workflow.getHandle(id).result()));
    const seconds = (Date.now() - t0) / 1000;
    const cpu = cpuShares(cpuBefore, cpuSnapshot(), { 'Temporal dev server': /temporal server start-dev/, 'this process (client and worker)': new RegExp(`^\\S*node.*temporal-ceiling`) });
    startLatencies.sort((a, b) => a - b);
    const p = (q: number) => percentile(startLatencies, q).toFixed(1);
    console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, ${CLIENTS} clients, ${DURATION_S} s of starts`);
    console.log('\n| workflows | completed/s sustained | start p50 ms | start p99 ms |');
    console.log('|---|---|---|---|');
    console.log(`| ${started.length} | ${(started.length / seconds).toFixed(1)} | ${p(50)} | ${p(99)} |`);
    console.log(`\nCPU (share of one core, first start → last completion): ${cpu}`);
  } finally {
    worker.shutdown();
    await running;
    await env.teardown();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
