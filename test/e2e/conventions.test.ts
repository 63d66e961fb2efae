import { sql } from 'kysely';
import { apiClient, createTenant, individual, stack, testDb, waitFor, type Tenant } from '../harness';
import { revokeApiKey } from '../../src/admin/accounts';
import { PERMISSIONS } from '../../src/api/context';
import { CHAIN_RAILS } from '../../src/domain/rails';
import { bodyFingerprint } from '../../src/api/idempotency';

// Every row of docs/CONVENTIONS.md that the foundation covers, through the running API.

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

describe('health and documents', () => {
  test('healthz and readyz answer without a key', async () => {
    const health = await fetch(`${stack().apiUrl}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${stack().apiUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: {
        database: 'ok', temporal: 'ok', sanctions: 'ok',
        // Every chain served, none needing an operator (docs/OPERATIONS.md).
        chains: Object.fromEntries(CHAIN_RAILS.map((chain) => [chain, 'ok'])),
        // What live keys may use: the ACH and SEPA rails on the test bank's files, the EVM chains,
        // solana and bitcoin on the test stack's nodes; no other fiat rail, no simulated chain.
        live: {
          real: { rails: ['ach', 'ach_push', 'ach_same_day', 'sepa', 'ethereum', 'polygon', 'arbitrum', 'optimism', 'base', 'fpnet', 'solana', 'bitcoin'], rates: expect.any(String), identity: null },
          unavailable: expect.objectContaining({ rails: ['wire', 'swift', 'faster_payments', 'pix', 'spei', 'stellar', 'tron'] }),
        },
      },
    });
  });

  test('the OpenAPI 3.1 document lists every route with its schemas', async () => {
    const res = await fetch(`${stack().apiUrl}/v0/openapi.json`);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v0/customers', '/v0/customers/{customer_id}', '/v0/customers/{customer_id}/kyc', '/v0/events']),
    );
    expect(doc.paths['/v0/customers'].post.requestBody.content['application/json'].schema.properties.email).toBeDefined();
    expect(doc.components.schemas.Customer.properties.kyc_status.enum).toContain('awaiting_ubo');
  });

  test('every resource carries id, object, created_at and updated_at (spec 2.1)', async () => {
    const doc = await (await fetch(`${stack().apiUrl}/v0/openapi.json`)).json();
    // Resources have an id (a balance, computed from the ledger, has none).
    const resources = Object.entries<any>(doc.components.schemas).filter(([, s]) => s.properties?.id && s.properties.object?.const);
    expect(resources.map(([name]) => name)).toEqual(expect.arrayContaining(['Customer', 'Screening', 'ScreeningBatch', 'Event', 'Transfer', 'AccountTransaction']));
    const lacking = resources.filter(([, s]) => !['id', 'created_at', 'updated_at'].every((f) => s.required?.includes(f)));
    expect(lacking.map(([name]) => name)).toEqual([]);
    // And the answers carry them: a screening, its batch, an event.
    const api = t.api;
    const screening = await api.post('/v0/sanctions/screen', { name: 'Jane Doe' });
    expect(screening.body.updated_at).toBe(screening.body.created_at);
    const batch = await api.post('/v0/sanctions/screen/batch', { entities: [{ name: 'Jane Doe' }] });
    expect(batch.body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const done = await waitFor(async () => {
      const b = (await api.get(`/v0/sanctions/screen/batch/${batch.body.id}`)).body;
      return b.status === 'completed' && b;
    }, { what: 'the batch to complete' });
    expect(done.updated_at).toBe(done.completed_at);
    const [event] = (await api.get('/v0/events?limit=1')).body.data;
    expect(event.updated_at).toBe(event.created_at);
  });
});

describe('authentication', () => {
  test('a missing key is 401 with the header named', async () => {
    const res = await apiClient().get('/v0/customers');
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual({ code: 'unauthorized', message: 'Missing Api-Key header', source: { location: 'header', key: 'Api-Key' } });
  });

  test('malformed and unknown keys are 401', async () => {
    expect((await apiClient('sk_test_short').get('/v0/customers')).body.error.code).toBe('unauthorized');
    const unknown = await apiClient(`sk_test_${'a'.repeat(40)}`).get('/v0/customers');
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.message).toMatch(/invalid or revoked/i);
  });

  test('keys are stored as hashes, never in clear', async () => {
    const rows = await testDb().selectFrom('api_keys').select(['key_hash', 'key_hint']).where('developer_id', '=', t.developerId).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
      expect([t.secret, t.liveSecret, t.publishable]).not.toContain(row.key_hash);
      expect(row.key_hint.length).toBeLessThanOrEqual(12);
    }
  });

  test('a revoked key stops working', async () => {
    const { id, key } = await t.key({});
    const api = apiClient(key);
    expect((await api.get('/v0/customers')).status).toBe(200);
    await revokeApiKey(testDb(), id);
    await waitFor(async () => (await api.get('/v0/customers')).status === 401, { timeoutMs: 10_000, what: 'revocation' });
  });
});

describe('permissions', () => {
  test('a restricted key may do only what it lists; write includes read', async () => {
    const reader = apiClient((await t.key({ permissions: ['customers:read'] })).key);
    expect((await reader.get('/v0/customers')).status).toBe(200);
    const denied = await reader.post('/v0/customers', individual());
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'forbidden', message: "This API key lacks the 'customers:write' permission" });

    const writer = apiClient((await t.key({ permissions: ['customers:write'] })).key);
    const created = await writer.post('/v0/customers', individual());
    expect(created.status).toBe(201);
    expect((await writer.get(`/v0/customers/${created.body.id}`)).status).toBe(200);
    expect((await writer.get(`/v0/customers/${created.body.id}/wallets`)).status).toBe(403); // accounts:read
  });

  test('events need an unrestricted secret key', async () => {
    const restricted = apiClient((await t.key({ permissions: ['customers:write', 'transfers:write'] })).key);
    expect((await restricted.get('/v0/events')).status).toBe(403);
    expect((await t.api.get('/v0/events')).status).toBe(200);
  });

  test('every route answers a key of each single permission, and a publishable key, as its x-permission and the conventions say', async () => {
    const doc = await (await fetch(`${stack().apiUrl}/v0/openapi.json`)).json();
    const routes = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.entries<any>(ops).map(([method, op]) => ({ method, path, permission: op['x-permission'] as string, operatorOnly: op['x-operator-only'] === true })));
    expect(routes.length).toBeGreaterThan(40);
    // The conventions' table: sandbox simulations are payments:write (reads of them payments:read), payment records
    // payments:read, webhook endpoints and events an unrestricted key.
    for (const r of routes) {
      if (r.path.startsWith('/v0/sandbox/')) expect([r.path, r.permission]).toEqual([r.path, r.method === 'get' ? 'payments:read' : 'payments:write']);
      if (r.path.startsWith('/v0/payments')) expect([r.path, r.permission]).toEqual([r.path, 'payments:read']);
      if (/^\/v0\/(webhooks|events)/.test(r.path)) expect([r.path, r.permission]).toEqual([r.path, 'unrestricted']);
    }
    const keyWith = async (opts: Parameters<Tenant['key']>[0]) => apiClient((await t.key({ plan: 'production', ...opts })).key);
    const keys = [
      ...await Promise.all(PERMISSIONS.map(async (permission) => ({ holds: permission as string, api: await keyWith({ permissions: [permission] }) }))),
      { holds: 'publishable', api: await keyWith({ kind: 'publishable' }) },
    ];
    const allowed = (holds: string, r: (typeof routes)[number]) => {
      if (holds === 'publishable') return r.method === 'post' && r.path === '/v0/customers/{customer_id}/kyc';
      if (r.permission === 'unrestricted') return false;
      return holds === r.permission || (r.permission.endsWith(':read') && holds === r.permission.replace(':read', ':write'));
    };
    const wrong: string[] = [];
    for (const r of routes) {
      const path = r.path.replace(/\{[^}]+\}/g, 'x_00000000000000000000');
      for (const { holds, api } of keys) {
        let res = await api.request(r.method.toUpperCase(), path, ['post', 'patch'].includes(r.method) ? { body: {} } : {});
        if (res.status === 429) {
          await new Promise((resolve) => setTimeout(resolve, 1100));
          res = await api.request(r.method.toUpperCase(), path, ['post', 'patch'].includes(r.method) ? { body: {} } : {});
        }
        // The platform operators' routes do not exist for any other developer's key.
        if (r.operatorOnly) {
          if (res.status !== 404) wrong.push(`${r.method} ${r.path} (operators only) with ${holds}: ${res.status}`);
          continue;
        }
        const denied = res.status === 403 && res.body.error?.code === 'forbidden';
        if (denied === allowed(holds, r)) wrong.push(`${r.method} ${r.path} (${r.permission}) with ${holds}: ${res.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test('a publishable key may only submit KYC', async () => {
    const pk = apiClient(t.publishable);
    const list = await pk.get('/v0/customers');
    expect(list.status).toBe(403);
    expect(list.body.error.code).toBe('forbidden');
    expect((await pk.post('/v0/customers', individual())).status).toBe(403);
    const customer = (await t.api.post('/v0/customers', individual())).body;
    const kyc = await pk.post(`/v0/customers/${customer.id}/kyc`, { document_type: 'passport' });
    expect(kyc.status).toBe(400); // allowed through auth; the body is incomplete
    expect(kyc.body.error.source).toEqual({ location: 'body', key: 'document_front' });
  });
});

describe('tenant and environment isolation', () => {
  test("another tenant's id answers 404, exactly like an unknown id", async () => {
    const other = await createTenant();
    const mine = (await t.api.post('/v0/customers', individual())).body;
    const theirs = await other.api.get(`/v0/customers/${mine.id}`);
    const unknown = await other.api.get('/v0/customers/cus_0000000000000000000000000000');
    expect(theirs.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(theirs.body.error.code).toBe('not_found');
    expect((await other.api.patch(`/v0/customers/${mine.id}`, { phone: '+14155550199' })).status).toBe(404);
    expect((await other.api.delete(`/v0/customers/${mine.id}`)).status).toBe(404);
    expect((await other.api.get('/v0/customers?limit=100')).body.data.map((c: any) => c.id)).not.toContain(mine.id);
    const events = await other.api.get(`/v0/events?object_id=${mine.id}`);
    expect(events.body.data).toEqual([]);
  });

  test('live keys do not see sandbox objects, and sandbox routes answer 404 to them', async () => {
    const sandboxCustomer = (await t.api.post('/v0/customers', individual())).body;
    const live = apiClient(t.liveSecret);
    expect((await live.get(`/v0/customers/${sandboxCustomer.id}`)).status).toBe(404);
    const liveCustomer = await live.post('/v0/customers', individual());
    expect(liveCustomer.status).toBe(201);
    expect((await t.api.get(`/v0/customers/${liveCustomer.body.id}`)).status).toBe(404);
    const sandboxRoute = await live.post(`/v0/sandbox/customers/${liveCustomer.body.id}/kyc_decision`, { decision: 'approve' });
    expect(sandboxRoute.status).toBe(404);
  });
});

describe('requests and errors', () => {
  test('malformed JSON is 400', async () => {
    const res = await t.api.request('POST', '/v0/customers', { rawBody: '{"type": ', headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: 'Malformed JSON body' });
  });

  test('a non-JSON body is 415', async () => {
    const res = await t.api.request('POST', '/v0/customers', { rawBody: 'type=individual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  test('a body over 1 MB is 413', async () => {
    const res = await t.api.post('/v0/customers', { ...individual(), last_name: 'x'.repeat(1_100_000) });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  test('an MPC round has the KYC submissions\' 12 MB (a key generation\'s round is about 1 MB); over it is 413', async () => {
    const round = { round: 3, messages: [{ session: '0'.repeat(64), round: 3, from: 2, to: 1, enc: 'AA==', ciphertext: 'A'.repeat(1_100_000) }] };
    const path = '/v0/wallets/wal_unknown/mpc_sessions/mpcs_unknown/messages';
    // Under the limit the body is read: the session is not this tenant's.
    expect((await t.api.post(path, round)).status).toBe(404);
    const over = await t.api.post(path, { ...round, messages: [{ ...round.messages[0], ciphertext: 'A'.repeat(12_600_000) }] });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('payload_too_large');
  });

  test('unknown body fields and query parameters are 400, naming them', async () => {
    const body = await t.api.post('/v0/customers', { ...individual(), frist_name: 'Jane' });
    expect(body.status).toBe(400);
    expect(body.body.error).toEqual({ code: 'invalid_request', message: "Unknown field 'frist_name'", source: { location: 'body', key: 'frist_name' } });
    const nested = await t.api.post('/v0/customers', individual({ address: { line1: 'a', city: 'b', country: 'US', zip: '1' } }));
    expect(nested.body.error.source).toEqual({ location: 'body', key: 'address.zip' });
    const query = await t.api.get('/v0/customers?colour=blue');
    expect(query.status).toBe(400);
    expect(query.body.error.source).toEqual({ location: 'query', key: 'colour' });
  });

  test('unknown routes are 404 and known paths with other methods 405 with Allow', async () => {
    const missing = await t.api.get('/v0/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const wrong = await t.api.request('PUT', '/v0/customers');
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.code).toBe('method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('POST, GET');
  });
});

describe('idempotency', () => {
  test('a replay returns the stored reply with Idempotent-Replayed and creates nothing twice', async () => {
    const body = individual();
    const first = await t.api.post('/v0/customers', body, { idempotencyKey: 'replay-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await t.api.post('/v0/customers', body, { idempotencyKey: 'replay-1' });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    const count = await testDb().selectFrom('customers').select((eb) => eb.fn.countAll<number>().as('n')).where('email', '=', body.email).executeTakeFirst();
    expect(Number(count!.n)).toBe(1);
  });

  test('the same key with another body or path is 422 naming the original request', async () => {
    await t.api.post('/v0/customers', individual(), { idempotencyKey: 'mismatch-1' });
    const other = await t.api.post('/v0/customers', individual(), { idempotencyKey: 'mismatch-1' });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_mismatch');
    expect(other.body.error.message).toContain('POST /v0/customers');
  });

  test('keys are scoped per developer account', async () => {
    const other = await createTenant();
    const a = await t.api.post('/v0/customers', individual(), { idempotencyKey: 'shared-key' });
    const b = await other.api.post('/v0/customers', individual(), { idempotencyKey: 'shared-key' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
  });

  test('a validation failure is not stored: the same key works once the body is fixed', async () => {
    const bad = await t.api.post('/v0/customers', individual({ email: 'not-an-email' }), { idempotencyKey: 'fix-me' });
    expect(bad.status).toBe(400);
    const good = await t.api.post('/v0/customers', individual(), { idempotencyKey: 'fix-me' });
    expect(good.status).toBe(201);
  });

  /** The claim row a request still running (or crashed) in another API process leaves behind. */
  async function claimInProgress(key: string, body: unknown, claimedAt: Date) {
    await testDb()
      .insertInto('idempotency_keys')
      .values({
        developer_id: t.developerId, environment: 'sandbox', key, method: 'POST', path: '/v0/customers',
        body_hash: bodyFingerprint(body), state: 'in_progress', response_status: null, response_body: null,
        locked_at: claimedAt, created_at: claimedAt,
      })
      .execute();
  }

  test('a key whose first request is still running is 409 idempotency_key_in_use', async () => {
    const body = individual();
    await claimInProgress('in-flight', body, new Date());
    const res = await t.api.post('/v0/customers', body, { idempotencyKey: 'in-flight' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('idempotency_key_in_use');
  });

  test('a claim left in progress by a crashed process is taken over after the lock expires', async () => {
    const body = individual();
    await claimInProgress('crashed', body, new Date(Date.now() - 120_000));
    const res = await t.api.post('/v0/customers', body, { idempotencyKey: 'crashed' });
    expect(res.status).toBe(201);
    const replay = await t.api.post('/v0/customers', body, { idempotencyKey: 'crashed' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(res.body.id);
  });

  test('a fault answers 500 with nothing half-done, and the same key can be retried', async () => {
    const body = individual();
    // Fault injection in the real database: the insert of this one customer fails.
    await sql`create or replace function fail_customer_insert() returns trigger language plpgsql as $$
      begin if new.email = ${sql.lit(body.email)} then raise exception 'injected fault'; end if; return new; end $$`.execute(testDb());
    await sql`create trigger fail_customer_insert before insert on customers for each row execute function fail_customer_insert()`.execute(testDb());
    try {
      const res = await t.api.post('/v0/customers', body, { idempotencyKey: 'fault-1' });
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('internal_error');
      expect(res.body.error.message).toMatch(/safe to retry/);
      expect(res.body.error.message).not.toMatch(/injected/);
      expect(await testDb().selectFrom('customers').select('id').where('email', '=', body.email).execute()).toEqual([]);
    } finally {
      await sql`drop trigger fail_customer_insert on customers`.execute(testDb());
      await sql`drop function fail_customer_insert()`.execute(testDb());
    }
    const retry = await t.api.post('/v0/customers', body, { idempotencyKey: 'fault-1' });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  test('50 concurrent duplicates create exactly one customer', async () => {
    const body = individual();
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => t.api.post('/v0/customers', body, { idempotencyKey: 'burst-50' })),
    );
    const created = replies.filter((r) => r.status === 201);
    const inUse = replies.filter((r) => r.status === 409);
    expect(created.length + inUse.length).toBe(50);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const r of inUse) expect(r.body.error.code).toBe('idempotency_key_in_use');
    const rows = await testDb().selectFrom('customers').select('id').where('email', '=', body.email).execute();
    expect(rows).toHaveLength(1);
    // Once the first finished, every retry replays it.
    const retry = await t.api.post('/v0/customers', body, { idempotencyKey: 'burst-50' });
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(rows[0].id);
  });

  test('an Idempotency-Key that is not printable ASCII or too long is 400', async () => {
    const res = await t.api.post('/v0/customers', individual(), { idempotencyKey: 'k'.repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body.error.source).toEqual({ location: 'header', key: 'Idempotency-Key' });
  });

  test('the reaper forgets keys older than the retention period', async () => {
    const old = new Date(Date.now() - 25 * 3600_000);
    await testDb()
      .insertInto('idempotency_keys')
      .values({
        developer_id: t.developerId, environment: 'sandbox', key: 'ancient', method: 'POST', path: '/v0/customers',
        body_hash: 'x', state: 'completed', response_status: 201, response_body: '{}', locked_at: old, created_at: old,
      })
      .execute();
    const { createMaintenanceActivities } = await import('../../activities/maintenance');
    const reaped = await createMaintenanceActivities(testDb(), 24).reapExpiredIdempotencyKeys();
    expect(reaped).toBeGreaterThanOrEqual(1);
    const left = await testDb().selectFrom('idempotency_keys').select('key').where('key', '=', 'ancient').execute();
    expect(left).toHaveLength(0);
  });
});

describe('pagination', () => {
  test('pages are newest first, and stable while rows are inserted', async () => {
    const tenant = await createTenant();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await tenant.api.post('/v0/customers', individual())).body.id);
    const expected = [...ids].reverse();

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await tenant.api.get(`/v0/customers?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.object).toBe('list');
      seen.push(...page.body.data.map((c: any) => c.id));
      cursor = page.body.has_more ? page.body.cursor : undefined;
      if (page.body.has_more) expect(page.body.cursor).toMatch(/^cur_/);
      else expect(page.body.cursor).toBeUndefined();
      // Concurrent inserts between pages must neither repeat nor skip items.
      await Promise.all([tenant.api.post('/v0/customers', individual()), tenant.api.post('/v0/customers', individual())]);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(expected);
  });

  test('limit bounds and bad cursors are 400', async () => {
    expect((await t.api.get('/v0/customers?limit=0')).body.error.source).toEqual({ location: 'query', key: 'limit' });
    expect((await t.api.get('/v0/customers?limit=101')).status).toBe(400);
    expect((await t.api.get('/v0/customers?cursor=garbage')).body.error.source).toEqual({ location: 'query', key: 'cursor' });
  });

  test('created_after and created_before filter', async () => {
    const tenant = await createTenant();
    const a = (await tenant.api.post('/v0/customers', individual())).body;
    await new Promise((r) => setTimeout(r, 20));
    const b = (await tenant.api.post('/v0/customers', individual())).body;
    const after = await tenant.api.get(`/v0/customers?created_after=${encodeURIComponent(a.created_at)}`);
    expect(after.body.data.map((c: any) => c.id)).toEqual([b.id]);
    const before = await tenant.api.get(`/v0/customers?created_before=${encodeURIComponent(b.created_at)}`);
    expect(before.body.data.map((c: any) => c.id)).toEqual([a.id]);
  });
});

describe('rate limits', () => {
  test('a sandbox-plan key gets 10 requests per second, then 429 with Retry-After', async () => {
    const { key } = await t.key({ plan: 'sandbox' });
    const api = apiClient(key);
    const replies = await Promise.all(Array.from({ length: 20 }, () => api.get('/v0/customers?limit=1')));
    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    // All 20 land in at most two one-second windows.
    expect(ok.length).toBeGreaterThanOrEqual(10);
    expect(ok.length).toBeLessThanOrEqual(20 - limited.length);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of replies) {
      expect(r.headers.get('ratelimit-limit')).toBe('10');
      expect(Number(r.headers.get('ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
    expect(limited[0].body.error.code).toBe('rate_limited');
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  test('the daily quota gives 429 daily_quota_exceeded', async () => {
    const tenant = await createTenant({ rateLimitPerSecond: 1000, dailyQuota: 3 });
    for (let i = 0; i < 3; i++) expect((await tenant.api.get('/v0/customers')).status).toBe(200);
    const over = await tenant.api.get('/v0/customers');
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('daily_quota_exceeded');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('outbox', () => {
  test('a rolled-back request leaves neither the object nor its event', async () => {
    const before = await testDb().selectFrom('events').select(sql<number>`count(*)`.as('n')).where('developer_id', '=', t.developerId).executeTakeFirst();
    await t.api.post('/v0/customers', individual({ phone: '+1' }));
    const after = await testDb().selectFrom('events').select(sql<number>`count(*)`.as('n')).where('developer_id', '=', t.developerId).executeTakeFirst();
    expect(Number(after!.n)).toBe(Number(before!.n));
  });
});
