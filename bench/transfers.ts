// `npm run bench:transfers`: transfers created through the API and carried to payment_processed on
// instant sandbox rails (PIX in, PIX out), the whole production stack on this machine (API and
// worker processes, PostgreSQL, the Temporal dev server, anvil). Prints a markdown table for
// docs/BENCHMARKS.md: sustained transfers/s, POST latency, and creation-to-processed latency. Each
// round's concurrent phase is repeated with a webhook endpoint registered (a local receiver
// answering 200): its transfers/s as a ratio to the phase without in the same round, the median of
// the rounds (target ≥ 0.9), and how many of its events were delivered. Before the measured
// concurrent phases, BENCH_WARMUP seconds (default 60) of unmeasured ones bring the API and the
// worker to steady state. Right before each concurrent
// phase (BENCH_PAIRS rounds, default 3), on the same dev server at the same concurrency, the
// ceiling: the transfer-shaped workflow of bench:temporal-ceiling with no work in it. Each round's
// transfers/s and CPU per processed transfer (API, worker, dev server, PostgreSQL) are printed as
// ratios to its ceiling, and the median of the rounds (issue 51: ≥ 0.85 × its workflows/s, ≤ 1.3 ×
// its CPU per workflow). BENCH_TEMPORAL=cluster runs the same on the production layout's Temporal
// cluster (its services as separate processes on PostgreSQL) instead of the dev server (issue 34).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDb } from '../src/db';
import { documents } from '../test/harness/documents';
import { startBenchTemporalCluster } from './cluster';
import { measureCeiling, type CeilingResult } from './ceiling/phase';
import { cpuSeconds, cpuShares, cpuSnapshot } from './cpu';
import { median, percentile } from './stats';
import { adminUrl, createUnlimitedKey, startStack } from '../test/harness/stack';
import { prepareStatementCounting } from '../test/harness/work-counts';
import { ceilingHistory, COUNTED_ROLE, measureTransferWork, printWorkCounts } from './work-counts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 30);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ON_CLUSTER = process.env.BENCH_TEMPORAL === 'cluster';
/** Rounds of the ceiling and, right after it, the concurrent transfers; the run reports their median. */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 3);
/**
 * Seconds of unmeasured concurrent transfers before the rounds, the second half with a webhook
 * endpoint (for the last phase). The API and the worker run a few thousand functions a transfer
 * passes through; V8 optimizes them as they get hot, over a minute or two of load, and compiling
 * them costs CPU meanwhile. The ceiling's few functions are hot within its own warm-up
 * (bench/ceiling/phase.ts), so without this the rounds would compare a warm ceiling with a stack
 * still compiling.
 */
const WARM_UP_S = Number(process.env.BENCH_WARMUP ?? 60);
/** Transfers counted one by one (statements, history) after the one-client phase. */
const COUNTED = Number(process.env.BENCH_COUNTED ?? 20);

/** Processes of the stack, by command line, for the CPU line of each phase. */
const CPU_KINDS = {
  'Temporal dev server': /temporal server start-dev/,
  'Temporal history': /temporal-server .*--service history/,
  'Temporal matching': /temporal-server .*--service matching/,
  'Temporal frontend': /temporal-server .*--service frontend/,
  'Temporal worker service': /temporal-server .*--service worker/,
  worker: /workers\/main\.ts/,
  API: /src\/main\/api\.ts/,
  PostgreSQL: /^postgres/,
  'bench client': /bench\/transfers\.ts/,
  anvil: /anvil/,
  Redis: /redis-server/,
};
/** Temporal's processes: the dev server keeps its history in memory; the cluster keeps it in PostgreSQL. */
const TEMPORAL = ON_CLUSTER ? ['Temporal history', 'Temporal matching', 'Temporal frontend', 'Temporal worker service', 'PostgreSQL'] : ['Temporal dev server'];
/** The processes a transfer's CPU is counted over (not the load generator, the chain node or Redis). */
const TRANSFER_PROCESSES = ['API', 'worker', ...TEMPORAL.filter((k) => k !== 'PostgreSQL'), 'PostgreSQL'];
/** The ceiling's: Temporal, and this process, which runs its worker (and its light client). */
const CEILING_PROCESSES = [...TEMPORAL, 'bench client'];
const sumOf = (cpu: Record<string, number>, kinds: string[]) => kinds.reduce((total, k) => total + (cpu[k] ?? 0), 0);

async function main() {
  const logDir = path.join(__dirname, '../test-logs/bench-transfers');
  const cluster = ON_CLUSTER ? await startBenchTemporalCluster(logDir) : undefined;
  // The API and the worker connect as a role of their own: PostgreSQL counts their statements apart from the bench's.
  const adminDb = createDb(adminUrl(), 1);
  await prepareStatementCounting(adminDb, COUNTED_ROLE);
  const stack = await startStack({
    databaseRole: COUNTED_ROLE,
    name: 'benchtr',
    logDir,
    temporalAddress: cluster?.address,
    // A fast sandbox clock makes PIX settle at once and its return window close within a second.
    // STACK_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles the API and worker processes.
    // Webhook delivery looks for events as often as in production (the suite's stack looks ten
    // times as often, to be quick).
    extraEnv: {
      LOG_LEVEL: 'warn', SANDBOX_TIME_SCALE: '1000000', TRANSFER_DAILY_LIMIT_USD: '1000000000', WEBHOOK_POLL_MS: '500', WEBHOOK_IDLE_POLL_MS: '2000',
    },
  }).catch(async (err) => {
    await cluster?.stop();
    await adminDb.destroy();
    throw err;
  });
  const db = createDb(stack.info.databaseUrl, 4);
  try {
    const key = await createUnlimitedKey(stack.info.databaseUrl);
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${stack.info.apiUrl}${p}`, { method, headers: { 'Api-Key': key, 'Content-Type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
      return { status: res.status, body: (await res.json()) as any };
    };
    // One approved Brazilian customer with a Brazilian account.
    const customer = (await api('POST', '/v0/customers', {
      type: 'individual', email: 'bench.transfers@example.com', first_name: 'Bench', last_name: 'Mark', date_of_birth: '1990-04-12',
      address: { line1: 'Av. Paulista 1000', city: 'São Paulo', postal_code: '01310-100', country: 'BR' },
    })).body;
    await api('POST', `/v0/customers/${customer.id}/kyc`, documents());
    for (let i = 0; i < 300 && (await api('GET', `/v0/customers/${customer.id}`)).body.kyc_status !== 'approved'; i++) await new Promise((r) => setTimeout(r, 100));
    const account = (await api('POST', '/v0/external-accounts', {
      customer_id: customer.id, type: 'international_bank_account', account_name: 'Maria Silva', iban: 'BR1800360305000010009795493C1',
      bic: 'BRASBRRJ', bank_name: 'Banco', bank_country: 'BR',
    })).body;
    const body = {
      amount: '10.00', on_behalf_of: customer.id, source: { payment_rail: 'pix', currency: 'brl' },
      destination: { payment_rail: 'pix', currency: 'brl', external_account_id: account.id },
    };

    // A receiver that takes every webhook at once.
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

    const phase = (clients: number, withWebhook: boolean, durationS = DURATION_S) =>
      transferPhase({ db, api, body, clients, withWebhook, durationS, receiverPort: (receiver.address() as AddressInfo).port });

    // One client first (latency without contention), then the unmeasured warm-up at full concurrency.
    const single = await phase(1, false);
    // Then the counts, transfers one at a time, each to its workflow's end.
    const work = await measureTransferWork({ api, body, adminDb, temporalAddress: stack.info.temporalAddress, count: COUNTED });
    // Its second half with a webhook endpoint, so that webhook delivery is as warm as the rest.
    if (WARM_UP_S > 0) {
      for (const withWebhook of [false, true]) console.log(`warm-up: ${(await phase(CONCURRENCY, withWebhook, WARM_UP_S / 2)).row}`);
    }
    // BENCH_PAIRS rounds of the ceiling, on the stack's own dev server (the stack idle meanwhile),
    // right after it the transfers at the same concurrency, then the same with a webhook endpoint
    // receiving every event: each round's ratios compare phases a minute apart, and the median of
    // the rounds is what a run says (this machine's speed moves by a third between minutes).
    const rounds: { ceiling: CeilingResult; ceilingCpuMs: number; transfers: PhaseResult; hooked: PhaseResult }[] = [];
    for (let round = 1; round <= PAIRS; round++) {
      const ceiling = await measureCeiling({ address: stack.info.temporalAddress, clients: CONCURRENCY, durationS: DURATION_S, kinds: CPU_KINDS });
      const ceilingCpuMs = (sumOf(ceiling.cpu, CEILING_PROCESSES) / ceiling.started) * 1000;
      console.log(`round ${round}: ceiling (${CONCURRENCY} clients) ${ceiling.perSecond.toFixed(1)} workflows/s; CPU per workflow ${ceilingCpuMs.toFixed(1)} ms `
        + `(${CEILING_PROCESSES.map((k) => `${k} ${((1000 * (ceiling.cpu[k] ?? 0)) / ceiling.started).toFixed(1)}`).join(', ')})`);
      const transfers = await phase(CONCURRENCY, false);
      rounds.push({ ceiling, ceilingCpuMs, transfers, hooked: await phase(CONCURRENCY, true) });
    }
    const webhookRatios = rounds.map((r) => r.hooked.perSecond / r.transfers.perSecond);

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    console.log(`\nTemporal: ${ON_CLUSTER ? 'the production layout\'s cluster (history, matching, frontend, worker processes on PostgreSQL)' : 'the CLI dev server'}`);
    console.log(`${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; each phase creates for ${DURATION_S} s, after ${WARM_UP_S} s of unmeasured warm-up at ${CONCURRENCY} clients`);
    console.log('\n| clients | transfers created | processed | errors | transfers/s sustained (first created → last processed) | POST p50 ms | POST p99 ms | created→processed p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of [single, ...rounds.flatMap((x) => [x.transfers, x.hooked])]) console.log(r.row);
    console.log(`\nwith a webhook endpoint: ${webhookRatios.map((r) => r.toFixed(2)).join(', ')} × the transfers/s without in the same round; `
      + `median ${median(webhookRatios).toFixed(2)} (target ≥ 0.90)`);
    console.log(`\n| ${CONCURRENCY} clients | ceiling workflows/s | transfers/s | ratio (≥ 0.85) | ceiling CPU ms per workflow | transfer CPU ms (${TRANSFER_PROCESSES.join(', ')}) | ratio (≤ 1.30) |`);
    console.log('|---|---|---|---|---|---|---|');
    const ratios = rounds.map((r) => {
      const oursMs = Object.values(r.transfers.cpuMs).reduce((a, b) => a + b, 0);
      return { oursMs, rate: r.transfers.perSecond / r.ceiling.perSecond, cpu: oursMs / r.ceilingCpuMs };
    });
    rounds.forEach((r, i) => {
      const { oursMs, rate, cpu } = ratios[i]!;
      console.log(`| round ${i + 1} | ${r.ceiling.perSecond.toFixed(1)} | ${r.transfers.perSecond.toFixed(1)} | ${rate.toFixed(2)} | ${r.ceilingCpuMs.toFixed(1)} `
        + `| ${oursMs.toFixed(1)} (${Object.values(r.transfers.cpuMs).map((v) => v.toFixed(1)).join(', ')}) | ${cpu.toFixed(2)} |`);
    });
    const [rate, cpuRatio] = [median(ratios.map((r) => r.rate)), median(ratios.map((r) => r.cpu))];
    console.log(`| median of ${rounds.length} | | | **${rate.toFixed(2)}** (${rate >= 0.85 ? 'holds' : 'does not hold'}) | | | **${cpuRatio.toFixed(2)}** (${cpuRatio <= 1.3 ? 'holds' : 'does not hold'}) |`);
    printWorkCounts(work, await ceilingHistory(stack.info.temporalAddress, rounds[0]!.ceiling.sampleWorkflowId));
    receiver.close();
  } finally {
    await db.destroy();
    await adminDb.destroy();
    await stack.stop();
    await cluster?.stop();
  }
}

type Api = (method: string, p: string, body?: unknown) => Promise<{ status: number; body: any }>;
interface PhaseResult {
  /** Its row of the markdown table. */
  row: string;
  /** Processed transfers per second, first created → last processed. */
  perSecond: number;
  /** CPU milliseconds per processed transfer, per process of TRANSFER_PROCESSES. */
  cpuMs: Record<string, number>;
}

/** `clients` loops create a transfer and fund it for `durationS` seconds; then every transfer of the phase is waited for. */
async function transferPhase(opts: {
  db: ReturnType<typeof createDb>; api: Api; body: unknown; clients: number; withWebhook: boolean; durationS: number; receiverPort: number;
}): Promise<PhaseResult> {
  const { db, api, body, clients, withWebhook } = opts;
  await sql`truncate table events`.execute(db);
  // A phase with a webhook endpoint registers one for its length (deleted once its events are delivered).
  let endpointId: string | undefined;
  if (withWebhook) {
    const endpoint = await api('POST', '/v0/webhooks', { url: `http://127.0.0.1:${opts.receiverPort}/hooks`, enabled_events: ['*'] });
    if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
    endpointId = endpoint.body.id;
  }
  const phaseStart = new Date();
  const postLatencies: number[] = [];
  const cpuBefore = cpuSnapshot();
  let errors = 0;
  const until = Date.now() + opts.durationS * 1000;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (Date.now() < until) {
      const t0 = performance.now();
      const created = await api('POST', '/v0/transfers', body);
      postLatencies.push(performance.now() - t0);
      if (created.status !== 201) {
        errors++;
        continue;
      }
      const deposit = await api('POST', `/v0/sandbox/transfers/${created.body.id}/deposit`);
      if (deposit.status !== 200) errors++;
    }
  }));
  const created = postLatencies.length - errors;
  // Then wait for every transfer of the phase to be processed (or give up after three minutes).
  const drainDeadline = Date.now() + 180_000;
  while (Date.now() < drainDeadline) {
    const processed = Number((await sql<{ n: string }>`select count(*)::text as n from transfers
      where state = 'payment_processed' and created_at >= ${phaseStart}`.execute(db)).rows[0].n);
    if (processed >= created) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const cpuAfter = cpuSnapshot();
  const used = cpuSeconds(cpuBefore, cpuAfter, CPU_KINDS);
  const done = (await sql<{ created_at: Date; processed_at: Date }>`
    select t.created_at, e.created_at as processed_at from transfers t
    join events e on e.object_id = t.id and e.type = 'transfer.payment_processed' where t.created_at >= ${phaseStart}`.execute(db)).rows;
  const endToEnd = done.map((r) => r.processed_at.getTime() - r.created_at.getTime()).sort((a, b) => a - b);
  const first = Math.min(...done.map((r) => r.created_at.getTime()));
  const last = Math.max(...done.map((r) => r.processed_at.getTime()));
  postLatencies.sort((a, b) => a - b);
  // Where the time goes: median time from creation to each named event.
  const steps = (await sql<{ type: string; p50: number }>`
    select e.type, percentile_cont(0.5) within group (order by extract(epoch from e.created_at - t.created_at) * 1000) as p50
    from transfers t join events e on e.object_id = t.id and e.type like 'transfer.%' and e.type <> 'transfer.updated'
    where t.created_at >= ${phaseStart} group by e.type order by p50`.execute(db)).rows;
  console.log(`${clients} client(s), median ms from creation: ${steps.map((x) => `${x.type.replace('transfer.', '')} ${Math.round(x.p50)}`).join(', ')}`);
  console.log(`${clients} client(s), CPU (share of one core over the phase): ${cpuShares(cpuBefore, cpuAfter, CPU_KINDS)}`);
  const perSecond = done.length / ((last - first) / 1000);
  if (withWebhook) {
    await reportWebhookDelivery(db, phaseStart);
    const deleted = await api('DELETE', `/v0/webhooks/${endpointId}`);
    if (deleted.status !== 200) throw new Error(`webhook endpoint: ${deleted.status} ${JSON.stringify(deleted.body)}`);
  }
  return {
    row: `| ${clients}${withWebhook ? ' + webhook endpoint' : ''} | ${created} | ${done.length} | ${errors} | ${perSecond.toFixed(1)} | ${percentile(postLatencies, 50).toFixed(1)} | ${percentile(postLatencies, 99).toFixed(1)} | ${percentile(endToEnd, 50)} | ${percentile(endToEnd, 99)} |`,
    perSecond,
    cpuMs: Object.fromEntries(TRANSFER_PROCESSES.map((k) => [k, (1000 * (used[k] ?? 0)) / Math.max(1, done.length)])),
  };
}

/** Waits until every event of the phase was delivered (or two minutes), and says how many were, and how fast. */
async function reportWebhookDelivery(db: ReturnType<typeof createDb>, phaseStart: Date) {
  const count = async () => (await sql<{ events: string; delivered: string; p50: number | null; p99: number | null }>`
    select count(*)::text as events, count(d.delivered_at)::text as delivered,
      percentile_cont(0.5) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p50,
      percentile_cont(0.99) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p99
    from events e left join webhook_deliveries d on d.event_id = e.id and d.status = 'delivered'
    where e.created_at >= ${phaseStart}`.execute(db)).rows[0]!;
  const deadline = Date.now() + 120_000;
  let c = await count();
  while (c.delivered !== c.events && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    c = await count();
  }
  console.log(`webhooks: ${c.delivered} of ${c.events} events delivered; event → delivered p50 ${Math.round(c.p50 ?? 0)} ms, p99 ${Math.round(c.p99 ?? 0)} ms`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
