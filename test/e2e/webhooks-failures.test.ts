import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { apiClient, createTenant, individual, stack, testDb, waitFor, type ApiClient, type Tenant } from '../harness';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import { customerCreatedEvent, receiversOfThisFile, registerWebhook } from '../harness/webhook-receiver';

const receiver = receiversOfThisFile();
const register = (api: ApiClient, url: string) => registerWebhook(api, url);
const customerCreated = async (api: ApiClient) => (await customerCreatedEvent(api, individual())).eventId;

const deliveryOf = async (api: ApiClient, eventId: string) => (await api.get(`/v0/events/${eventId}`)).body.deliveries[0];

test('a delivery still failing at the end of its retry window fails, the endpoint is marked failing with why; later events are still queued and a redelivery sends it again', async () => {
  const t = await createTenant();
  let healthy = false;
  const r = await receiver(() => (healthy ? 200 : 500));
  const endpoint = await register(t.api, r.url);
  const eventId = await customerCreated(t.api);
  await waitFor(async () => r.of(eventId).length >= 1);
  // Three days pass (the retry window is measured from when the event was queued).
  await sql`update webhook_deliveries set created_at = now() - interval '73 hours' where event_id = ${eventId}`.execute(testDb());
  await waitFor(async () => (await deliveryOf(t.api, eventId))?.status === 'failed', { what: 'the delivery given up' });
  const failing = (await t.api.get(`/v0/webhooks/${endpoint.id}`)).body;
  expect(failing.status).toBe('failing');
  expect(failing.status_reason).toMatch(new RegExp(`^${eventId} not delivered after \\d+ attempts: answered 500$`));

  healthy = true;
  const later = await customerCreated(t.api);
  await waitFor(async () => r.of(later).length > 0, { what: 'a later event, to a failing endpoint' });
  expect((await t.api.post(`/v0/events/${eventId}/redeliver`)).status).toBe(202);
  await waitFor(async () => (await deliveryOf(t.api, eventId))?.status === 'delivered', { what: 'the redelivery' });
  expect((await t.api.patch(`/v0/webhooks/${endpoint.id}`, { disabled: false })).body).toMatchObject({ status: 'enabled', status_reason: null });
});

test("a developer's 10,000 queued events to a dead endpoint do not delay another developer's delivery", async () => {
  const a = await createTenant();
  const b = await createTenant();
  const dead = await receiver(() => 'hang');
  const deadEndpoint = await register(a.api, dead.url);
  await sql`
    with e as (
      insert into events (id, developer_id, environment, type, object_id, data, previous_attributes, created_at)
      select 'evt_dead' || lpad(i::text, 6, '0'), ${a.developerId}, 'sandbox', 'customer.updated', 'cus_dead', '{}'::jsonb, null, now()
      from generate_series(1, 10000) as i
      returning id)
    insert into webhook_deliveries (event_id, endpoint_id, status, next_attempt_at, created_at)
    select id, ${deadEndpoint.id}, 'pending', now(), now() from e`.execute(testDb());
  await waitFor(async () => dead.received.length >= 8, { what: 'the dead endpoint taking its first round' });

  const r = await receiver();
  await register(b.api, r.url);
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const eventId = await customerCreated(b.api);
    const created = Date.parse((await b.api.get(`/v0/events/${eventId}`)).body.created_at);
    const [got] = await waitFor(async () => r.of(eventId).length > 0 && r.of(eventId), { timeoutMs: 30_000 });
    latencies.push(got!.at - created);
  }
  process.stdout.write(`webhook latency beside a dead endpoint with 10,000 queued events: ${latencies.join(', ')} ms\n`);
  expect(Math.max(...latencies)).toBeLessThan(3_000);
  await a.api.delete(`/v0/webhooks/${deadEndpoint.id}`);
});

describe('a worker killed mid-delivery', () => {
  const own = apiAndWorkerOfTheirOwn('webhook-crash');

  test('still delivers every event, repeats under the same X-Webhook-Id', async () => {
    const t: Tenant = await createTenant();
    const crashApi = apiClient(t.secret, own.url());
    const r = await receiver((n) => (n === 0 ? 'hang' : 200));
    // Polling before the events: its start on a loaded machine is not counted in the waits below.
    await own.startFirstWorker();
    await register(crashApi, r.url);
    const events = [await customerCreated(crashApi), await customerCreated(crashApi), await customerCreated(crashApi)];
    await waitFor(async () => r.received.length >= 1, { timeoutMs: 30_000, what: 'the first delivery under way' });
    own.killWorker();
    await new Promise((resolve) => setTimeout(resolve, 500));
    own.startWorker();
    await waitFor(async () => {
      const rows = await testDb().selectFrom('webhook_deliveries').select('status').where('event_id', 'in', events).execute();
      return rows.length === 3 && rows.every((row) => row.status === 'delivered');
    }, { timeoutMs: 80_000, what: 'every event delivered after the restart' });
    for (const eventId of events) {
      const got = r.of(eventId);
      expect(got.length).toBeGreaterThanOrEqual(1);
      expect(new Set(got.map((g) => g.headers['x-webhook-id']))).toEqual(new Set([eventId]));
    }
    process.stdout.write(`webhook crash test: ${r.received.length} requests for ${events.length} events\n`);
  }, 240_000);
});

describe('a worker stopped (SIGTERM) while its deliveries hang', () => {
  // Deliveries that would wait 20 s (the longest allowed) for an answer: the stop must not wait for them.
  const own = apiAndWorkerOfTheirOwn('webhook-stop', { WEBHOOK_TIMEOUT_MS: '20000' });

  test('exits 0 within seconds, with no error line; the cut delivery is not an attempt, and goes out once the worker is back', async () => {
    const t = await createTenant();
    const api = apiClient(t.secret, own.url());
    let answering = false;
    const r = await receiver(() => (answering ? 200 : 'hang'));
    await register(api, r.url);
    await own.startFirstWorker();
    const worker = own.worker();
    const eventId = await customerCreated(api);
    await waitFor(async () => r.of(eventId).length >= 1, { what: 'the delivery in flight' });

    const stopAsked = Date.now();
    const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
    worker.kill('SIGTERM');
    expect(await exited).toBe(0);
    const stopMs = Date.now() - stopAsked;
    process.stdout.write(`webhook stop: SIGTERM with a delivery hanging stopped the worker in ${stopMs} ms\n`);
    expect(stopMs).toBeLessThan(10_000);
    const log = fs.readFileSync(path.join(stack().logDir, 'worker-webhook-stop.log'), 'utf8');
    expect(log.split('\n').filter((line) => /"level":(50|60)|\[ERROR\]|\berror\b/i.test(line))).toEqual([]);
    expect(await deliveryOf(api, eventId)).toMatchObject({ status: 'pending', attempts: [] });

    // Back with the endpoint answering; the cut delivery's lease (45 s with this timeout) has run out.
    answering = true;
    await sql`update webhook_deliveries set next_attempt_at = now() where event_id = ${eventId}`.execute(testDb());
    own.startWorker();
    await waitFor(async () => (await deliveryOf(api, eventId))?.status === 'delivered', { what: 'the delivery sent again', timeoutMs: 60_000 });
    expect(r.of(eventId).length).toBe(2);
  }, 120_000);
});
