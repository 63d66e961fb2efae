// `npm run bench:api`: requests/s and latency of GET /v0/customers/{id} and POST /v0/customers
// against the whole production stack on this machine (API and worker processes, PostgreSQL, the
// Temporal dev server), both at the same concurrency in the same run: POST's figures as ratios to
// GET's (targets of issue 32: requests/s ≥ 0.4 × GET's, p99 < 4 × GET's). Prints markdown for
// docs/BENCHMARKS.md.
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createUnlimitedKey, startStack } from '../test/harness/stack';

const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const CONNECTIONS = 16;

interface Row {
  name: string;
  connections: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function run(name: string, connections: number, opts: autocannon.Options): Promise<Row> {
  const result = await autocannon({ ...opts, connections, duration: DURATION });
  return {
    name,
    connections,
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

async function main() {
  const stack = await startStack({ name: 'bench', logDir: path.join(__dirname, '../test-logs/bench'), extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const key = await createUnlimitedKey(stack.info.databaseUrl);
    const headers = { 'Api-Key': key, 'Content-Type': 'application/json' };
    const body = JSON.stringify({
      type: 'individual', email: 'bench@example.com', first_name: 'Bench', last_name: 'Mark', phone: '+14155550123',
      date_of_birth: '1990-04-12', address: { line1: '1 Market St', city: 'San Francisco', postal_code: '94105', country: 'US' },
    });
    const seed = await fetch(`${stack.info.apiUrl}/v0/customers`, { method: 'POST', headers, body });
    const customer = (await seed.json()) as { id: string };

    // Warm-up, then the measured runs.
    await autocannon({ url: `${stack.info.apiUrl}/v0/customers/${customer.id}`, headers, connections: 10, duration: 3 });
    const get = await run('GET /v0/customers/{id}', CONNECTIONS, { url: `${stack.info.apiUrl}/v0/customers/${customer.id}`, headers });
    const post = await run('POST /v0/customers', CONNECTIONS, { url: `${stack.info.apiUrl}/v0/customers`, method: 'POST', headers, body });
    const rows = [get, post];

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${DURATION} s per run`);
    console.log('\n| endpoint | connections | requests/s | p50 ms | p90 ms | p99 ms | errors | non-2xx |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.name} | ${r.connections} | ${Math.round(r.rps)} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.errors} | ${r.non2xx} |`);
    }
    const rpsRatio = post.rps / get.rps;
    const p99Ratio = post.p99 / Math.max(1, get.p99);
    console.log(`\nPOST / GET: requests/s ${rpsRatio.toFixed(2)} (target ≥ 0.40: ${rpsRatio >= 0.4 ? 'holds' : 'does not hold'}), `
      + `p99 ${p99Ratio.toFixed(2)} (target < 4: ${p99Ratio < 4 ? 'holds' : 'does not hold'})`);
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
