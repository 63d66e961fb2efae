import { business, createTenant, documents, individual, testDb, waitForKycStatus, type Tenant } from '../harness';

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

describe('create', () => {
  test('an individual with every field; tax_id is stored encrypted and never returned', async () => {
    const res = await t.api.post('/v0/customers', individual({ email: 'Mixed.Case@Example.com', tax_id: '123-45-6789' }));
    expect(res.status).toBe(201);
    const c = res.body;
    expect(c).toMatchObject({
      object: 'customer', type: 'individual', email: 'mixed.case@example.com', first_name: 'Jane', last_name: 'Doe',
      phone: '+14155550123', date_of_birth: '1990-04-12', tax_id_provided: true, status: 'pending',
      kyc_status: 'not_started', risk_rating: null, endorsements: [],
      address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' },
    });
    expect(c.id).toMatch(/^cus_[0-9A-Za-z]{28,}$/);
    expect(c.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(c).not.toHaveProperty('tax_id');
    expect(c.kyc_link).toMatch(/\/kyc\/[0-9A-Za-z]{43}$/);
    expect(Date.parse(c.kyc_link_expires_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000);

    const row = await testDb().selectFrom('customers').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.tax_id_encrypted).toMatch(/^v2:[0-9a-f]{8}:/);
    expect(row.tax_id_encrypted).not.toContain('6789');
    expect(row.kyc_link_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(c.kyc_link.split('/').pop());

    const fetched = await t.api.get(`/v0/customers/${c.id}`);
    expect(fetched.body).not.toHaveProperty('kyc_link');
    expect(fetched.body.tax_id_provided).toBe(true);
  });

  test('a business with its name; lower-case country codes are normalised', async () => {
    const res = await t.api.post('/v0/customers', business({ address: { line1: 'Rue de Rivoli 1', city: 'Paris', country: 'fr' } }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ type: 'business', business_name: 'Acme Payments GmbH', date_of_birth: null });
    expect(res.body.address.country).toBe('FR');
  });

  test.each([
    ['email', { email: 'jane@' }, /e-mail/],
    ['phone', { phone: '4155550123' }, /E\.164/],
    ['phone', { phone: '+1555' }, /E\.164/],
    ['date_of_birth', { date_of_birth: '1990-02-30' }, /real date/],
    ['date_of_birth', { date_of_birth: '2999-01-01' }, /in the past/],
    ['date_of_birth', { date_of_birth: '12/04/1990' }, /YYYY-MM-DD/],
    ['address.country', { address: { line1: 'a', city: 'b', country: 'XX' } }, /ISO 3166-1/],
    ['address.city', { address: { line1: 'a', country: 'US' } }, /Missing required field 'address.city'/],
    ['last_name', { last_name: undefined }, /Missing required field 'last_name'/],
    ['business_name', { business_name: 'Acme' }, /business customers only/],
    ['type', { type: 'trust' }, /Invalid 'type'/],
    ['tax_id', { tax_id: '1' }, /4 to 32/],
  ])('%s is validated (%j)', async (key, override, message) => {
    const res = await t.api.post('/v0/customers', individual(override));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.source).toEqual({ location: 'body', key });
    expect(res.body.error.message).toMatch(message);
  });

  test('business-specific rules', async () => {
    const noName = await t.api.post('/v0/customers', business({ business_name: undefined }));
    expect(noName.body.error.source.key).toBe('business_name');
    const dob = await t.api.post('/v0/customers', business({ date_of_birth: '1990-01-01' }));
    expect(dob.body.error.source.key).toBe('date_of_birth');
  });

  test('invalid input changes nothing', async () => {
    const tenant = await createTenant();
    await tenant.api.post('/v0/customers', individual({ email: 'broken' }));
    expect((await tenant.api.get('/v0/customers')).body.data).toEqual([]);
    expect((await tenant.api.get('/v0/events')).body.data).toEqual([]);
  });
});

describe('list filters', () => {
  test('status, kyc_status, type, email', async () => {
    const tenant = await createTenant();
    const a = (await tenant.api.post('/v0/customers', individual({ email: 'filter-a@example.com' }))).body;
    const b = (await tenant.api.post('/v0/customers', business())).body;
    const ids = async (q: string) => (await tenant.api.get(`/v0/customers${q}`)).body.data.map((c: any) => c.id);
    expect(await ids('?type=business')).toEqual([b.id]);
    expect(await ids('?type=individual')).toEqual([a.id]);
    expect(await ids('?email=FILTER-A@example.com')).toEqual([a.id]);
    expect(await ids('?status=pending')).toEqual([b.id, a.id]);
    expect((await tenant.api.get('/v0/customers?status=frozen')).body.error.source).toEqual({ location: 'query', key: 'status' });
    // KYC is not initiated until the first submission.
    expect(await ids('?kyc_status=not_started')).toEqual([b.id, a.id]);
    expect((await tenant.api.post(`/v0/customers/${a.id}/kyc`, documents())).status).toBe(202);
    await waitForKycStatus(tenant.api, a.id, 'approved');
    expect(await ids('?kyc_status=not_started')).toEqual([b.id]);
    expect(await ids('?kyc_status=approved')).toEqual([a.id]);
  });
});

describe('update', () => {
  test('contact fields and address change and emit customer.updated with previous_attributes', async () => {
    const c = (await t.api.post('/v0/customers', individual())).body;
    const res = await t.api.patch(`/v0/customers/${c.id}`, {
      phone: '+442071838750',
      address: { line1: '10 Downing St', city: 'London', postal_code: 'SW1A 2AA', country: 'GB' },
    });
    expect(res.status).toBe(200);
    expect(res.body.phone).toBe('+442071838750');
    expect(res.body.address.country).toBe('GB');
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
    const events = (await t.api.get(`/v0/events?object_id=${c.id}&type=customer.updated`)).body.data;
    expect(events).toHaveLength(1);
    expect(events[0].data.phone).toBe('+442071838750');
    expect(events[0].data.previous_attributes).toEqual({ phone: '+14155550123', address: c.address });
  });

  test('identity fields may change before KYC approval, not after', async () => {
    const c = (await t.api.post('/v0/customers', individual())).body;
    const before = await t.api.patch(`/v0/customers/${c.id}`, { last_name: 'Smith', tax_id: '987-65-4321' });
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ last_name: 'Smith', tax_id_provided: true });
    expect((await t.api.post(`/v0/customers/${c.id}/kyc`, documents())).status).toBe(202);
    await waitForKycStatus(t.api, c.id, 'approved');
    const after = await t.api.patch(`/v0/customers/${c.id}`, { date_of_birth: '1991-01-01' });
    expect(after.status).toBe(409);
    expect(after.body.error.code).toBe('invalid_state');
    expect((await t.api.patch(`/v0/customers/${c.id}`, { email: 'new.address@example.com' })).status).toBe(200);
  });

  test('type cannot change and fields of the other type are refused', async () => {
    const c = (await t.api.post('/v0/customers', individual())).body;
    expect((await t.api.patch(`/v0/customers/${c.id}`, { type: 'business' })).body.error.source).toEqual({ location: 'body', key: 'type' });
    expect((await t.api.patch(`/v0/customers/${c.id}`, { business_name: 'X' })).status).toBe(409);
    expect((await t.api.patch(`/v0/customers/${c.id}`, { phone: 'nope' })).status).toBe(400);
  });
});

describe('delete', () => {
  test('soft delete: readable by id, out of lists unless filtered, no further changes', async () => {
    const tenant = await createTenant();
    const c = (await tenant.api.post('/v0/customers', individual())).body;
    const del = await tenant.api.delete(`/v0/customers/${c.id}`);
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('deleted');
    expect((await tenant.api.get(`/v0/customers/${c.id}`)).body.status).toBe('deleted');
    expect((await tenant.api.get('/v0/customers')).body.data).toEqual([]);
    expect((await tenant.api.get('/v0/customers?status=deleted')).body.data.map((x: any) => x.id)).toEqual([c.id]);
    const patch = await tenant.api.patch(`/v0/customers/${c.id}`, { phone: '+14155550100' });
    expect(patch.status).toBe(409);
    expect(patch.body.error.code).toBe('invalid_state');
    expect((await tenant.api.delete(`/v0/customers/${c.id}`)).status).toBe(409);
    expect((await tenant.api.post(`/v0/customers/${c.id}/kyc`, documents())).status).toBe(409);
    const events = (await tenant.api.get(`/v0/events?object_id=${c.id}`)).body.data.map((e: any) => e.event);
    expect(events).toEqual(expect.arrayContaining(['customer.created', 'customer.deleted']));
  });
});

describe('sub-lists and events', () => {
  test('wallets and external accounts answer empty lists; unknown customers 404', async () => {
    const c = (await t.api.post('/v0/customers', individual())).body;
    for (const sub of ['wallets', 'external-accounts']) {
      const res = await t.api.get(`/v0/customers/${c.id}/${sub}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'list', data: [], has_more: false });
      expect((await t.api.get(`/v0/customers/cus_doesnotexist000000000000/${sub}`)).status).toBe(404);
    }
  });

  test('events are listed newest first and retrievable by id', async () => {
    const tenant = await createTenant();
    const c = (await tenant.api.post('/v0/customers', individual())).body;
    const list = await tenant.api.get('/v0/events?type=customer.created');
    expect(list.body.data).toHaveLength(1);
    const evt = list.body.data[0];
    expect(evt).toMatchObject({ object: 'event', event: 'customer.created', api_version: 'v0' });
    expect(evt.data.id).toBe(c.id);
    expect(evt.data).not.toHaveProperty('kyc_link');
    const one = await tenant.api.get(`/v0/events/${evt.id}`);
    // One event shows its webhook deliveries too (none here: the tenant has no endpoint).
    expect(one.body).toEqual({ ...evt, deliveries: [] });
    expect((await t.api.get(`/v0/events/${evt.id}`)).status).toBe(404);
  });
});
