import { sql } from 'kysely';
import { apiClient, createTenant, individual, temporalClient, testDb, waitFor, type Tenant } from '../harness';
import { customerCreatedEvent, receiversOfThisFile, registerWebhook, verifySignature, type webhookReceiver } from '../harness/webhook-receiver';
import { EVENT_CATALOGUE } from '../../src/domain/event-catalogue';
import { deliverDueWebhooks } from '../../src/webhooks/delivery';

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

type Receiver = Awaited<ReturnType<typeof webhookReceiver>>;
const receiver = receiversOfThisFile();
const register = (tenant: Tenant, url: string, enabledEvents?: string[]) => registerWebhook(tenant.api, url, enabledEvents);
const customerCreated = (tenant: Tenant) => customerCreatedEvent(tenant.api, individual());

// Which endpoints get which events, not how fast: a loaded two-core machine once took more than 20 s to deliver.
const waitForWebhook = (r: Receiver, eventId: string, count = 1, timeoutMs = 60_000) =>
  waitFor(async () => r.of(eventId).length >= count && r.of(eventId), { timeoutMs, what: `${count} deliveries of ${eventId}` });

describe('endpoints', () => {
  test('registered with a secret shown once, stored encrypted; listed, read, changed and deleted', async () => {
    const r = await receiver();
    const created = await t.api.post('/v0/webhooks', { url: r.url, enabled_events: ['customer.created', 'transfer.updated'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'webhook_endpoint', url: r.url, enabled_events: ['customer.created', 'transfer.updated'], status: 'enabled', description: null });
    expect(created.body.id).toMatch(/^whk_/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const row = await testDb().selectFrom('webhook_endpoints').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(row.secret_encrypted).not.toContain(created.body.secret.slice(6));

    const fetched = await t.api.get(`/v0/webhooks/${created.body.id}`);
    expect(fetched.body).not.toHaveProperty('secret');
    expect((await t.api.get('/v0/webhooks')).body.data.map((w: any) => w.id)).toContain(created.body.id);

    const changed = await t.api.patch(`/v0/webhooks/${created.body.id}`, { enabled_events: ['*'], description: 'all of them' });
    expect(changed.body).toMatchObject({ enabled_events: ['*'], description: 'all of them' });

    expect((await t.api.delete(`/v0/webhooks/${created.body.id}`)).body).toEqual({ id: created.body.id, object: 'webhook_endpoint', deleted: true });
    expect((await t.api.get(`/v0/webhooks/${created.body.id}`)).status).toBe(404);
  });

  test('bad input is refused, naming the field, and changes nothing', async () => {
    const before = await testDb().selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const unknown = await t.api.post('/v0/webhooks', { url: 'http://127.0.0.1:9/x', enabled_events: ['customer.created', 'customer.exploded'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.source).toEqual({ location: 'body', key: 'enabled_events[1]' });
    const live = apiClient(t.liveSecret);
    for (const [url, why] of [
      ['http://example.com/hooks', /https URL for live endpoints/],
      ['https://127.0.0.1/hooks', /public address/],
      ['https://localhost/hooks', /public address/],
      ['https://[::1]/hooks', /public address/],
      ['https://169.254.169.254/latest', /public address/],
      ['https://10.1.2.3/hooks', /public address/],
    ] as const) {
      const res = await live.post('/v0/webhooks', { url, enabled_events: ['*'] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(why);
    }
    const after = await testDb().selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });

  test('the OpenAPI document describes the payload of every event of the catalogue in its webhooks section', async () => {
    const doc = (await t.api.get('/v0/openapi.json')).body;
    expect(Object.keys(doc.webhooks).sort()).toEqual(Object.keys(EVENT_CATALOGUE).sort());
    const transferUpdated = doc.webhooks['transfer.updated'].post;
    expect(transferUpdated.parameters.map((p: any) => p.name)).toEqual(['X-Webhook-Id', 'X-Webhook-Signature']);
    const body = transferUpdated.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['id', 'object', 'event', 'api_version', 'created_at', 'sent_at', 'data']));
    expect(JSON.stringify(body.properties.data)).toContain('#/components/schemas/Transfer');
    expect(doc.webhooks['screening.completed'].post.requestBody.content['application/json'].schema.properties.data.$ref)
      .toBe('#/components/schemas/ScreeningCompletedData');
  });

  test('restricted keys cannot manage webhooks', async () => {
    const restricted = apiClient((await t.key({ permissions: ['customers:write', 'transfers:write'] })).key);
    expect((await restricted.get('/v0/webhooks')).status).toBe(403);
    expect((await restricted.post('/v0/webhooks', { url: 'http://127.0.0.1:9/x', enabled_events: ['*'] })).status).toBe(403);
  });
});

describe('delivery', () => {
  test('each event is signed over the exact bytes sent, with its id and sent_at, and recorded on the event', async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const endpoint = await register(tenant, r.url);
    const { eventId } = await customerCreated(tenant);
    const [got] = await waitForWebhook(r, eventId);
    expect(got.headers['x-webhook-id']).toBe(eventId);
    expect(got.headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(verifySignature(got.raw, got.headers['x-webhook-signature'], endpoint.secret)).toBe(true);
    expect(verifySignature(Buffer.concat([got.raw, Buffer.from(' ')]), got.headers['x-webhook-signature'], endpoint.secret)).toBe(false);
    const event = (await tenant.api.get(`/v0/events/${eventId}`)).body;
    const { deliveries: _deliveries, ...asListed } = event;
    expect(got.body).toEqual({ ...asListed, sent_at: expect.any(String) });
    expect(Math.abs(Date.parse(got.body.sent_at) - got.at)).toBeLessThan(5_000);
    await waitFor(async () => (await tenant.api.get(`/v0/events/${eventId}`)).body.deliveries[0]?.status === 'delivered');
    const recorded = (await tenant.api.get(`/v0/events/${eventId}`)).body.deliveries;
    expect(recorded).toEqual([{ webhook_id: endpoint.id, status: 'delivered', next_attempt_at: null, attempts: [expect.objectContaining({ status_code: 200, error: null })] }]);
  });

  test('a receiver that fails three times, then answers 200, gets the event; every attempt is recorded', async () => {
    const tenant = await createTenant();
    const r = await receiver((n) => (n < 3 ? 500 : 200));
    const endpoint = await register(tenant, r.url, ['customer.created']);
    const { eventId } = await customerCreated(tenant);
    const got = await waitForWebhook(r, eventId, 4);
    expect(new Set(got.map((g) => g.headers['x-webhook-id']))).toEqual(new Set([eventId]));
    await waitFor(async () => (await tenant.api.get(`/v0/events/${eventId}`)).body.deliveries[0]?.status === 'delivered');
    const [delivery] = (await tenant.api.get(`/v0/events/${eventId}`)).body.deliveries;
    expect(delivery.webhook_id).toBe(endpoint.id);
    expect(delivery.attempts.map((a: any) => [a.status_code, a.error])).toEqual([[500, null], [500, null], [500, null], [200, null]]);
    // Exponential backoff: each wait is longer than the one before, give or take the jitter.
    const gaps = got.slice(1).map((g, i) => g.at - got[i]!.at);
    expect(gaps[2]).toBeGreaterThan(gaps[0]!);
  });

  test('an endpoint whose creation commits late still gets its events: its delivery loop waits for it', async () => {
    // The API starts the endpoint's loop inside the transaction that creates it. Here that COMMIT
    // takes 3 s (a deferred trigger sleeps in it), so the loop's first look finds no endpoint yet.
    const tenant = await createTenant();
    const r = await receiver();
    const fn = `slow_commit_${tenant.secret.slice(-12).toLowerCase().replace(/[^a-z0-9]/g, '_')}`;
    await sql.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin
      if new.url = '${r.url}' then perform pg_sleep(3); end if; return null; end $$`).execute(testDb());
    await sql.raw(`create constraint trigger ${fn} after insert on webhook_endpoints deferrable initially deferred
      for each row execute function ${fn}()`).execute(testDb());
    let endpoint: { id: string };
    try {
      endpoint = await register(tenant, r.url, ['customer.created']);
    } finally {
      await sql.raw(`drop trigger if exists ${fn} on webhook_endpoints; drop function if exists ${fn}()`).execute(testDb());
    }
    const { eventId } = await customerCreated(tenant);
    await waitForWebhook(r, eventId);
    const loop = await (await temporalClient()).workflow.getHandle(`webhook-endpoint:${endpoint.id}`).describe();
    expect(loop.status.name).toBe('RUNNING');
  });

  test('a loop whose endpoint never committed ends with its period; a deleted endpoint\'s ends at its next look', async () => {
    const loop = (endpointId: string, maxWaitMs: number) => deliverDueWebhooks({ db: testDb(), cipher: undefined as never }, endpointId, {
      retryBaseMs: 200, retryWindowMs: 3_600_000, timeoutMs: 2_000, pollMs: 50, idlePollMs: 200, maxWaitMs, beat: () => undefined,
    });
    const started = Date.now();
    expect(await loop('whk_0VcNeverCommitted0000000000000000', 1_000)).toEqual({ delivered: 0, failed: 0, gone: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    const tenant = await createTenant();
    const endpoint = await register(tenant, (await receiver()).url);
    expect((await tenant.api.delete(`/v0/webhooks/${endpoint.id}`)).status).toBe(200);
    const deletedAt = Date.now();
    expect(await loop(endpoint.id, 600_000)).toEqual({ delivered: 0, failed: 0, gone: true });
    expect(Date.now() - deletedAt).toBeLessThan(60_000);
  });

  test('a receiver that does not answer within the timeout is tried again', async () => {
    const tenant = await createTenant();
    const r = await receiver((n) => (n === 0 ? 'hang' : 200));
    await register(tenant, r.url, ['customer.created']);
    const { eventId } = await customerCreated(tenant);
    await waitForWebhook(r, eventId, 2);
    await waitFor(async () => (await tenant.api.get(`/v0/events/${eventId}`)).body.deliveries[0]?.status === 'delivered');
    const [delivery] = (await tenant.api.get(`/v0/events/${eventId}`)).body.deliveries;
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: 'no answer within 2000 ms' });
    expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(2000);
    expect(delivery.attempts[1]).toMatchObject({ status_code: 200 });
  });

  test('only the events an endpoint enabled, only its own developer\'s and environment\'s; a disabled endpoint gets nothing', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const all = await receiver();
    const transfersOnly = await receiver();
    const other = await receiver();
    const disabled = await receiver();
    await register(a, all.url);
    await register(a, transfersOnly.url, ['transfer.created']);
    await register(b, other.url);
    const off = await register(a, disabled.url);
    expect((await a.api.patch(`/v0/webhooks/${off.id}`, { disabled: true })).body.status).toBe('disabled');
    // A live endpoint of the same developer: sandbox events are never queued for it.
    const live = await apiClient(a.liveSecret).post('/v0/webhooks', { url: 'https://hooks.example.com/live', enabled_events: ['*'] });
    expect(live.status).toBe(201);

    const { eventId } = await customerCreated(a);
    const fromB = await customerCreated(b);
    await waitForWebhook(all, eventId);
    await waitForWebhook(other, fromB.eventId);
    // Whatever went anywhere went by now: the others got none of it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const eventsOf = async (tenant: Tenant) => (await tenant.api.get('/v0/events?limit=100')).body.data.map((e: any) => e.id);
    const [ofA, ofB] = [await eventsOf(a), await eventsOf(b)];
    expect(all.received.map((x) => x.body.id)).toContain(eventId);
    expect(all.received.every((x) => ofA.includes(x.body.id))).toBe(true);
    expect(other.received.map((x) => x.body.id)).toContain(fromB.eventId);
    expect(other.received.every((x) => ofB.includes(x.body.id))).toBe(true);
    expect(transfersOnly.received).toEqual([]);
    expect(disabled.received).toEqual([]);
    const queued = await testDb().selectFrom('webhook_deliveries').select('event_id').where('endpoint_id', 'in', [off.id, live.body.id]).execute();
    expect(queued).toEqual([]);
  });

  test('rotation: both secrets sign inside the window, only the new one after', async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const endpoint = await register(tenant, r.url);
    const rotated = await tenant.api.post(`/v0/webhooks/${endpoint.id}/rotate_secret`, { expires_in_hours: 1 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    const first = await customerCreated(tenant);
    const [during] = await waitForWebhook(r, first.eventId);
    expect(String(during.headers['x-webhook-signature']).split(',')).toHaveLength(2);
    expect(verifySignature(during.raw, during.headers['x-webhook-signature'], rotated.body.secret)).toBe(true);
    expect(verifySignature(during.raw, during.headers['x-webhook-signature'], endpoint.secret)).toBe(true);

    const again = await tenant.api.post(`/v0/webhooks/${endpoint.id}/rotate_secret`, { expires_in_hours: 0 });
    const second = await customerCreated(tenant);
    const [after] = await waitForWebhook(r, second.eventId);
    expect(verifySignature(after.raw, after.headers['x-webhook-signature'], again.body.secret)).toBe(true);
    expect(verifySignature(after.raw, after.headers['x-webhook-signature'], rotated.body.secret)).toBe(false);
  });

  test('a test event goes to its endpoint alone; an event is sent again on request, under the same id', async () => {
    const tenant = await createTenant();
    const tested = await receiver();
    const bystander = await receiver();
    const endpoint = await register(tenant, tested.url);
    await register(tenant, bystander.url);
    expect((await tenant.api.post(`/v0/webhooks/${endpoint.id}/test`)).status).toBe(202);
    const [test] = await waitFor(async () => tested.of('webhook.test').length > 0 && tested.of('webhook.test'));
    expect(test.body.data).toEqual({ webhook_id: endpoint.id });

    const { eventId } = await customerCreated(tenant);
    await waitForWebhook(tested, eventId);
    await waitForWebhook(bystander, eventId);
    expect((await tenant.api.post(`/v0/events/${eventId}/redeliver`, { webhook_id: endpoint.id })).status).toBe(202);
    const twice = await waitForWebhook(tested, eventId, 2);
    expect(twice.map((w) => w.headers['x-webhook-id'])).toEqual([eventId, eventId]);
    expect(bystander.of('webhook.test')).toEqual([]);
    expect(bystander.of(eventId)).toHaveLength(1);
  });

  test('a redelivery asked for while the first delivery is in flight is sent too: the event arrives twice', async () => {
    const tenant = await createTenant();
    let slowEvent: string | undefined;
    // The first delivery of the customer's event is answered 1 s late (inside the stack's 2-s timeout): the redelivery comes meanwhile.
    const slow = await receiver((_n, body) => (body.event === 'customer.created' && !slowEvent ? (slowEvent = body.id, { status: 200, afterMs: 1_000 }) : 200));
    await register(tenant, slow.url);
    const { eventId } = await customerCreated(tenant);
    await waitForWebhook(slow, eventId);
    expect((await tenant.api.post(`/v0/events/${eventId}/redeliver`)).status).toBe(202);
    const twice = await waitForWebhook(slow, eventId, 2);
    expect(twice.map((w) => w.headers['x-webhook-id'])).toEqual([eventId, eventId]);
    const settled = await waitFor(async () => {
      const { deliveries } = (await tenant.api.get(`/v0/events/${eventId}`)).body;
      return deliveries[0]?.status === 'delivered' && deliveries[0];
    }, { what: 'the delivery settled' });
    expect(settled.attempts).toHaveLength(2);
  });

  test('another developer\'s endpoints and events are not found', async () => {
    const other = await createTenant();
    const r = await receiver();
    const theirs = await register(other, r.url);
    const { eventId } = await customerCreated(other);
    expect((await t.api.get(`/v0/webhooks/${theirs.id}`)).status).toBe(404);
    expect((await t.api.delete(`/v0/webhooks/${theirs.id}`)).status).toBe(404);
    expect((await t.api.post(`/v0/events/${eventId}/redeliver`)).status).toBe(404);
    const mine = await customerCreated(t);
    const res = await t.api.post(`/v0/events/${mine.eventId}/redeliver`, { webhook_id: theirs.id });
    expect(res.status).toBe(400);
    expect(res.body.error.source).toEqual({ location: 'body', key: 'webhook_id' });
  });
});

