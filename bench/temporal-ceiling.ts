// `npm run bench:temporal-ceiling`: how many transfer-shaped workflows per second the Temporal CLI dev
// server and one worker carry on this machine when the workflow does no work at all (no database,
// no API, no rails): the same start (with its search attributes), deposit Update, timers, patch and
// local-activity markers and search-attribute updates as a real transfer. The ceiling that `npm run bench:transfers` can approach, not pass
// (bench:transfers measures it too, in the same run, on its own stack).
import os from 'node:os';
import { freePort, startTestTemporalServer } from '../test/harness/stack';
import { measureCeiling } from './ceiling/phase';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 20);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);

async function main() {
  // The same dev server and flags as the test harness and bench:transfers (in-memory SQLite).
  const port = await freePort();
  const env = await startTestTemporalServer(port);
  try {
    const r = await measureCeiling({
      address: `127.0.0.1:${port}`, clients: CLIENTS, durationS: DURATION_S, withoutLocalActivities: process.env.BENCH_WITHOUT_LOCAL_ACTIVITIES === '1',
      kinds: { 'Temporal dev server': /temporal server start-dev/, 'this process (client and worker)': /^\S*node.*temporal-ceiling/ },
    });
    const seconds = r.started / r.perSecond;
    console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model}), Node ${process.version}, ${CLIENTS} clients, ${DURATION_S} s of starts`);
    console.log('\n| workflows | completed/s sustained | start p50 ms | start p99 ms |');
    console.log('|---|---|---|---|');
    console.log(`| ${r.started} | ${r.perSecond.toFixed(1)} | ${r.startP50.toFixed(1)} | ${r.startP99.toFixed(1)} |`);
    console.log(`\nCPU (share of one core, first start → last completion): ${Object.entries(r.cpu).map(([k, s]) => `${k} ${Math.round((s / seconds) * 100)} %`).join(', ')}`);
  } finally {
    await env.teardown();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
