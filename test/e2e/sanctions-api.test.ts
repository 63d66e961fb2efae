import { createTenant, individual, testDb, type Tenant } from '../harness';

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

describe('POST /v0/sanctions/screen', () => {
  test('a listed name is a potential match with the spec fields; the event is emitted', async () => {
    const res = await t.api.post('/v0/sanctions/screen', { name: 'Ayman al-Zawahiri', type: 'individual', date_of_birth: '1951-06-19', country: 'eg' });
    expect(res.status).toBe(200);
    const s = res.body;
    expect(s).toMatchObject({ object: 'screening', status: 'potential_match', customer_id: null, batch_id: null });
    expect(s.id).toMatch(/^scr_/);
    expect(s.match_count).toBe(s.matches.length);
    expect(s.match_count).toBeGreaterThan(0);
    expect(s.match_count).toBeLessThanOrEqual(10);
    expect(s.data_sources_checked).toBe(6);
    expect(s.list_versions.map((v: any) => v.source).sort()).toEqual(['eu_fsf', 'gb_hmt_ofsi', 'un_sc', 'us_bis_dpl', 'us_ofac_cons', 'us_ofac_sdn']);
    const m = s.matches[0];
    expect(m).toMatchObject({ source_name: expect.any(String), matched_name: expect.stringMatching(/ZAWAHIRI/i), entity_type: 'individual' });
    expect(m.score).toBeGreaterThan(0.9);
    expect(m.score_details.date_of_birth).toBeGreaterThan(0);
    for (let i = 1; i < s.matches.length; i++) expect(s.matches[i - 1].score).toBeGreaterThanOrEqual(s.matches[i].score);

    const events = await t.api.get(`/v0/events?object_id=${s.id}`);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0]).toMatchObject({ event: 'screening.completed', data: { screening_id: s.id, status: 'potential_match', customer_id: null } });
  });

  test('a clean name is clear', async () => {
    const res = await t.api.post('/v0/sanctions/screen', { name: 'Ingeborg Abrahamsen', type: 'individual', date_of_birth: '1972-11-21', country: 'FR' });
    expect(res.body).toMatchObject({ status: 'clear', match_count: 0, matches: [] });
  });

  test('the screened name is stored encrypted', async () => {
    const res = await t.api.post('/v0/sanctions/screen', { name: 'Kathryn Barr', type: 'individual' });
    const row = await testDb().selectFrom('screenings').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.query_encrypted).toMatch(/^v2:[0-9a-f]{8}:/);
    expect(JSON.stringify(row)).not.toContain('Barr');
  });

  test('validation: name required, real dates, ISO countries, known types, no unknown fields', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'name'],
      [{ name: '  ' }, 'name'],
      [{ name: 'A', date_of_birth: '1990-13-01' }, 'date_of_birth'],
      [{ name: 'A', country: 'ZZ' }, 'country'],
      [{ name: 'A', type: 'vessel' }, 'type'],
      [{ name: 'A', nationality: 'US' }, 'nationality'],
    ];
    for (const [body, key] of cases) {
      const res = await t.api.post('/v0/sanctions/screen', body);
      expect(res.status).toBe(400);
      expect(res.body.error.source).toEqual({ location: 'body', key });
    }
  });

  test('linking a customer: it must be the tenant\'s own', async () => {
    const customer = (await t.api.post('/v0/customers', individual())).body;
    const linked = await t.api.post('/v0/sanctions/screen', { name: 'Jane Doe', customer_id: customer.id });
    expect(linked.body.customer_id).toBe(customer.id);
    const list = await t.api.get(`/v0/sanctions/screenings?customer_id=${customer.id}`);
    expect(list.body.data.map((s: any) => s.id)).toContain(linked.body.id);
    const other = await createTenant();
    const foreign = await other.api.post('/v0/sanctions/screen', { name: 'Jane Doe', customer_id: customer.id });
    expect(foreign.status).toBe(404);
  });
});

describe('reading screenings', () => {
  test('by id, scoped to the tenant; list filters', async () => {
    const tenant = await createTenant();
    const hit = (await tenant.api.post('/v0/sanctions/screen', { name: 'BANCO NACIONAL DE CUBA', type: 'business' })).body;
    const clear = (await tenant.api.post('/v0/sanctions/screen', { name: 'Ingeborg Abrahamsen' })).body;
    expect((await tenant.api.get(`/v0/sanctions/screenings/${hit.id}`)).body).toEqual(hit);
    expect((await t.api.get(`/v0/sanctions/screenings/${hit.id}`)).status).toBe(404);
    const ids = async (q: string) => (await tenant.api.get(`/v0/sanctions/screenings${q}`)).body.data.map((s: any) => s.id);
    expect(await ids('')).toEqual([clear.id, hit.id]);
    expect(await ids('?status=potential_match')).toEqual([hit.id]);
    expect(await ids('?status=clear')).toEqual([clear.id]);
    expect((await tenant.api.get('/v0/sanctions/screenings?status=maybe')).status).toBe(400);
  });

  test('permissions: customers:read reads, customers:write screens', async () => {
    const { key } = await t.key({ permissions: ['customers:read'] });
    const { apiClient } = await import('../harness');
    const reader = apiClient(key);
    expect((await reader.get('/v0/sanctions/screenings')).status).toBe(200);
    expect((await reader.post('/v0/sanctions/screen', { name: 'x' })).status).toBe(403);
  });
});

describe('batch screening', () => {
  test('a batch of 2,500 runs as a workflow; progress, then the screenings page by page; the event fires', async () => {
    const tenant = await createTenant();
    const { loadNegatives } = await import('../../bench/reference-lists');
    const clean = loadNegatives().slice(0, 2497).map((n) => ({ name: n.name, type: 'individual' as const, date_of_birth: n.dateOfBirth }));
    const entities = [
      { name: 'BANCO NACIONAL DE CUBA', type: 'business' },
      ...clean.slice(0, 1200),
      { name: 'Ayman al-Zawahiri', type: 'individual', country: 'EG' },
      ...clean.slice(1200),
      { name: 'AEROCARIBBEAN AIRLINES' },
    ];
    const created = await tenant.api.post('/v0/sanctions/screen/batch', { entities });
    expect(created.status).toBe(202);
    expect(created.body).toMatchObject({ object: 'screening_batch', status: 'processing', total: 2500, processed: 0 });
    const batchId = created.body.id;

    const { temporalClient, waitFor } = await import('../harness');
    const client = await temporalClient();
    const result = await client.workflow.getHandle(`screening-batch:${batchId}`).result();
    expect(result).toMatchObject({ total: 2500, screened: 2500 });
    expect(result.potentialMatches).toBeGreaterThanOrEqual(3);

    const done = await waitFor(async () => {
      const r = await tenant.api.get(`/v0/sanctions/screen/batch/${batchId}?limit=100`);
      return r.body.status === 'completed' ? r.body : undefined;
    });
    expect(done).toMatchObject({ processed: 2500, progress: 1, potential_matches: result.potentialMatches });
    expect(done.screenings.data).toHaveLength(100);
    expect(done.screenings.data[0]).toMatchObject({ status: 'potential_match', batch_id: batchId });
    let cursor = done.screenings.cursor;
    let seen = 100;
    while (cursor) {
      const page = await tenant.api.get(`/v0/sanctions/screen/batch/${batchId}?limit=100&cursor=${cursor}`);
      seen += page.body.screenings.data.length;
      cursor = page.body.screenings.cursor;
    }
    expect(seen).toBe(2500);

    const events = await tenant.api.get(`/v0/events?type=screening_batch.completed`);
    expect(events.body.data[0].data).toMatchObject({ batch_id: batchId, status: 'completed', total: 2500 });
    // Batch items do not emit one event each.
    expect((await tenant.api.get('/v0/events?type=screening.completed')).body.data).toEqual([]);
    expect((await t.api.get(`/v0/sanctions/screen/batch/${batchId}`)).status).toBe(404);
  });

  test('batch validation: 1 to 10,000 entities, each validated', async () => {
    expect((await t.api.post('/v0/sanctions/screen/batch', { entities: [] })).body.error.source).toEqual({ location: 'body', key: 'entities' });
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ name: `N${i}` }));
    expect((await t.api.post('/v0/sanctions/screen/batch', { entities: tooMany })).status).toBe(400);
    const bad = await t.api.post('/v0/sanctions/screen/batch', { entities: [{ name: 'ok' }, { name: 'x', country: 'QQ' }] });
    expect(bad.body.error.source).toEqual({ location: 'body', key: 'entities.1.country' });
  });
});
