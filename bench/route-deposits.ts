// `npm run bench:route-deposits`: a deposit on a standing route (a usd virtual account over ACH,
// paid out as USDC on base) against a one-off transfer of the same legs (ACH in, USDC on base out),
// on one stack in the same run (issue 50). Each round runs BENCH_TRANSFERS deposits of each kind
// (default 200) at the same pace, BENCH_RATE a second (default 8, under what this machine carries:
// at saturation a latency measures the queue, not the path), timed to `transfer.payment_processed`:
// - one-off, waiting: transfers created first, then funded; timed from the payment's arrival (the
//   sandbox's deposit route is called);
// - one-off, created and funded at once: timed from the create request (a route's deposit creates
//   its transfer when the payment arrives: this is the same work);
// - route: payments to the virtual account, timed from their arrival.
// Prints each round's p50 and p99, and the median of the rounds' ratios of the route to each.
import os from 'node:os';
import { sql } from 'kysely';
import type { Db } from '../src/db';
import type { ApiClient } from '../test/harness';
import { RECEIVER } from '../test/harness/transfers';
import { median, percentile } from './stats';
import { withTransferStack } from './transfer-stack';

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 200);
const CLIENTS = 8;
const RATE = Number(process.env.BENCH_RATE ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Latencies { p50: number; p99: number }
interface Round { oneOff: Latencies; createdAndFunded: Latencies; route: Latencies }

async function main() {
  await withTransferStack('bench-route-deposits', async ({ db, api, customerId }) => {
    const destination = { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER };
    const va = await api.post(`/v0/customers/${customerId}/virtual_accounts`, { source: { currency: 'usd' }, destination });
    if (va.status !== 201) throw new Error(`virtual account: ${va.status} ${JSON.stringify(va.body)}`);
    const body = { amount: '10.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' }, destination };
    const rounds: Round[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const r = { oneOff: await oneOffPhase(db, api, body), createdAndFunded: await createdAndFundedPhase(db, api, body), route: await routePhase(db, api, va.body.id) };
      console.log(`round ${round}: ${Object.entries(r).map(([k, l]) => `${k} p50 ${l.p50} ms p99 ${l.p99} ms`).join('; ')}`);
      rounds.push(r);
    }
    report(rounds);
  });
}

/** Starts `work` `count` times, BENCH_RATE a second, whether or not the earlier ones have answered. */
async function paced(count: number, work: () => Promise<void>) {
  const started = Date.now();
  const running: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    await new Promise((r) => setTimeout(r, Math.max(0, started + (i * 1000) / RATE - Date.now())));
    running.push(work());
  }
  await Promise.all(running);
}

/** Runs `work` for each of `count` items on CLIENTS clients (the untimed creation of waiting transfers). */
async function onClients(count: number, work: () => Promise<void>) {
  let left = count;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (left-- > 0) await work();
  }));
}

/** One-off transfers, all created first; then each funded, timed from its deposit. */
async function oneOffPhase(db: Db, api: ApiClient, body: unknown): Promise<Latencies> {
  const ids: string[] = [];
  await onClients(TRANSFERS, async () => {
    const created = await api.post('/v0/transfers', body);
    if (created.status !== 201) throw new Error(`transfer: ${created.status} ${JSON.stringify(created.body)}`);
    ids.push(created.body.id);
  });
  const arrived = new Map<string, number>();
  const queue = [...ids];
  await paced(ids.length, async () => {
    const id = queue.pop()!;
    arrived.set(id, Date.now());
    const deposit = await api.post(`/v0/sandbox/transfers/${id}/deposit`);
    if (deposit.status !== 200) throw new Error(`deposit: ${deposit.status} ${JSON.stringify(deposit.body)}`);
  });
  return latencies(db, arrived);
}

/** One-off transfers, each funded as soon as it is created; timed from the create request. */
async function createdAndFundedPhase(db: Db, api: ApiClient, body: unknown): Promise<Latencies> {
  const started = new Map<string, number>();
  const requests: number[] = [];
  await paced(TRANSFERS, async () => {
    const at = Date.now();
    const created = await api.post('/v0/transfers', body);
    if (created.status !== 201) throw new Error(`transfer: ${created.status} ${JSON.stringify(created.body)}`);
    started.set(created.body.id, at);
    const deposit = await api.post(`/v0/sandbox/transfers/${created.body.id}/deposit`);
    if (deposit.status !== 200) throw new Error(`deposit: ${deposit.status} ${JSON.stringify(deposit.body)}`);
    requests.push(Date.now() - at);
  });
  requests.sort((a, b) => a - b);
  console.log(`create and deposit requests: p50 ${percentile(requests, 50)} ms`);
  return latencies(db, started);
}

/** Payments to the virtual account, each timed from its arrival to its transfer's payout. */
async function routePhase(db: Db, api: ApiClient, virtualAccountId: string): Promise<Latencies> {
  const arrived = new Map<string, number>();
  const requests: number[] = [];
  await paced(TRANSFERS, async () => {
    const at = Date.now();
    const deposit = await api.post(`/v0/sandbox/virtual_accounts/${virtualAccountId}/deposit`, { amount: '10.00' });
    if (deposit.status !== 200 || !deposit.body.transfer_id) throw new Error(`route deposit: ${deposit.status} ${JSON.stringify(deposit.body)}`);
    arrived.set(deposit.body.transfer_id, at);
    requests.push(Date.now() - at);
  });
  requests.sort((a, b) => a - b);
  console.log(`route deposit requests: p50 ${percentile(requests, 50)} ms`);
  return latencies(db, arrived);
}

/** Waits (up to 10 minutes) until every transfer is processed; arrival → `transfer.payment_processed`. */
async function latencies(db: Db, arrived: Map<string, number>): Promise<Latencies> {
  const ids = [...arrived.keys()];
  const deadline = Date.now() + 600_000;
  for (;;) {
    const done = (await sql<{ object_id: string; created_at: Date }>`
      select object_id, created_at from events where type = 'transfer.payment_processed' and object_id = any(${ids})`.execute(db)).rows;
    if (done.length === ids.length) {
      const sorted = done.map((e) => e.created_at.getTime() - arrived.get(e.object_id)!).sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    }
    if (Date.now() > deadline) throw new Error(`${done.length} of ${ids.length} transfers processed after 10 minutes`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function report(rounds: Round[]) {
  console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; `
    + `${TRANSFERS} ACH→USDC-on-base deposits per kind and round, ${RATE} a second`);
  console.log('\n| round | one-off waiting p50 ms | p99 | created and funded p50 ms | p99 | route p50 ms | p99 |');
  console.log('|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => console.log(`| ${i + 1} | ${r.oneOff.p50} | ${r.oneOff.p99} | ${r.createdAndFunded.p50} | ${r.createdAndFunded.p99} | ${r.route.p50} | ${r.route.p99} |`));
  for (const against of ['oneOff', 'createdAndFunded'] as const) {
    const p50 = median(rounds.map((r) => r.route.p50 / r[against].p50));
    const p99 = median(rounds.map((r) => r.route.p99 / r[against].p99));
    console.log(`median of ${rounds.length} rounds, route / ${against}: ${p50.toFixed(2)} × p50, ${p99.toFixed(2)} × p99`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
