import { apiClient, createTenant, individual, testDb, type Tenant } from '../harness';

let t: Tenant;
let customerId: string;
beforeAll(async () => {
  t = await createTenant();
  customerId = (await t.api.post('/v0/customers', individual())).body.id;
});

const us = (over: Record<string, unknown> = {}) => ({
  customer_id: customerId ?? 'cus_set_in_beforeAll', type: 'us_bank_account', account_name: 'Jane Doe checking', account_type: 'checking',
  routing_number: '021000021', account_number: '000123456789', ...over,
});
const intl = (over: Record<string, unknown> = {}) => ({
  customer_id: customerId ?? 'cus_set_in_beforeAll', type: 'international_bank_account', account_name: 'Jane Doe', iban: 'DE89 3704 0044 0532 0130 00',
  bic: 'DEUTDEFF', bank_name: 'Deutsche Bank', bank_country: 'DE', ...over,
});

describe('POST /v0/external-accounts', () => {
  test('a US bank account: pending verification, only the last four shown, the number encrypted', async () => {
    const res = await t.api.post('/v0/external-accounts', us());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      object: 'external_account', customer_id: customerId, type: 'us_bank_account', status: 'pending_verification',
      account_name: 'Jane Doe checking', account_type: 'checking', routing_number: '021000021', last4: '6789',
    });
    expect(res.body.id).toMatch(/^ext_/);
    expect(JSON.stringify(res.body)).not.toContain('000123456789');
    const row = await testDb().selectFrom('external_accounts').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.number_encrypted).toMatch(/^v2:[0-9a-f]{8}:/);
    expect(JSON.stringify(row)).not.toContain('000123456789');
    const events = await t.api.get(`/v0/events?object_id=${res.body.id}`);
    expect(events.body.data.map((e: any) => e.event)).toEqual(['external_account.created']);
  });

  test('international, CLABE and crypto accounts are usable at once', async () => {
    const iban = await t.api.post('/v0/external-accounts', intl());
    expect(iban.body).toMatchObject({ status: 'active', bic: 'DEUTDEFF', bank_country: 'DE', last4: '3000', bank_name: 'Deutsche Bank' });
    const clabe = await t.api.post('/v0/external-accounts', { customer_id: customerId, type: 'mx_bank_account', account_name: 'Juan Pérez', clabe: '002010077777777771' });
    expect(clabe.body).toMatchObject({ status: 'active', bank_code: '002', last4: '7771' });
    const crypto = await t.api.post('/v0/external-accounts', {
      customer_id: customerId, type: 'crypto_address', chain: 'base', address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', label: 'treasury',
    });
    expect(crypto.body).toMatchObject({ status: 'active', chain: 'base', address: '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', label: 'treasury', last4: null });
  });

  test.each([
    [us({ routing_number: '021000022' }), 'routing_number', /checksum/],
    [us({ account_number: '12' }), 'account_number', /4 to 17 digits/],
    [us({ account_type: 'brokerage' }), 'account_type', /Invalid/],
    [intl({ iban: 'DE89370400440532013001' }), 'iban', /not a valid IBAN/],
    [intl({ bank_country: 'FR' }), 'iban', /IBAN of DE, but bank_country is FR/],
    [intl({ bic: 'BNPAFRPP' }), 'bic', /BIC of FR, but bank_country is DE/],
    [intl({ bic: 'DEUT1EFF' }), 'bic', /8 or 11/],
    [{ customer_id: 'x', type: 'mx_bank_account', account_name: 'J', clabe: '002010077777777772' }, 'clabe', /control digit/],
    [{ customer_id: 'x', type: 'crypto_address', chain: 'ethereum', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }, 'address', /EIP-55/],
    [{ customer_id: 'x', type: 'crypto_address', chain: 'dogecoin', address: 'D...' }, 'chain', /Invalid/],
    [{ customer_id: 'x', type: 'paypal' }, 'type', /Invalid/],
    [{ ...us(), iban: 'DE89370400440532013000' }, 'iban', /Unknown field/],
  ])('invalid input is a 400 naming the field (%#)', async (body, key, message) => {
    const res = await t.api.post('/v0/external-accounts', body);
    expect(res.status).toBe(400);
    expect(res.body.error.source).toEqual({ location: 'body', key });
    expect(res.body.error.message).toMatch(message);
  });

  test('the customer must be the tenant\'s own and not deleted', async () => {
    const other = await createTenant();
    const foreign = await other.api.post('/v0/external-accounts', us());
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.source).toEqual({ location: 'body', key: 'customer_id' });
    const gone = (await t.api.post('/v0/customers', individual())).body;
    await t.api.delete(`/v0/customers/${gone.id}`);
    expect((await t.api.post('/v0/external-accounts', us({ customer_id: gone.id }))).status).toBe(409);
  });

  test('the same account twice for one customer is 409 naming the existing id', async () => {
    const c = (await t.api.post('/v0/customers', individual())).body.id;
    const first = await t.api.post('/v0/external-accounts', intl({ customer_id: c }));
    const again = await t.api.post('/v0/external-accounts', intl({ customer_id: c, iban: 'de89370400440532013000', account_name: 'Other name' }));
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain(first.body.id);
    // After deleting the link, it may be made again.
    await t.api.delete(`/v0/external-accounts/${first.body.id}`);
    expect((await t.api.post('/v0/external-accounts', intl({ customer_id: c }))).status).toBe(201);
    const evm = { customer_id: c, type: 'crypto_address', chain: 'ethereum', address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' };
    expect((await t.api.post('/v0/external-accounts', evm)).status).toBe(201);
    expect((await t.api.post('/v0/external-accounts', { ...evm, address: evm.address.toLowerCase() })).status).toBe(409);
    expect((await t.api.post('/v0/external-accounts', { ...evm, chain: 'base' })).status).toBe(201);
  });
});

describe('reading and deleting', () => {
  test('list filters, the customer sub-list, tenant isolation, soft delete', async () => {
    const tenant = await createTenant();
    const c = (await tenant.api.post('/v0/customers', individual())).body.id;
    const a = (await tenant.api.post('/v0/external-accounts', us({ customer_id: c }))).body;
    const b = (await tenant.api.post('/v0/external-accounts', { customer_id: c, type: 'crypto_address', chain: 'solana', address: 'So11111111111111111111111111111111111111112' })).body;
    const ids = async (q: string) => (await tenant.api.get(`/v0/external-accounts${q}`)).body.data.map((x: any) => x.id);
    expect(await ids('')).toEqual([b.id, a.id]);
    expect(await ids('?type=crypto_address')).toEqual([b.id]);
    expect(await ids('?chain=solana')).toEqual([b.id]);
    expect(await ids('?status=pending_verification')).toEqual([a.id]);
    expect(await ids(`?customer_id=${c}`)).toEqual([b.id, a.id]);
    expect((await tenant.api.get(`/v0/customers/${c}/external-accounts`)).body.data.map((x: any) => x.id)).toEqual([b.id, a.id]);
    expect((await t.api.get(`/v0/external-accounts/${a.id}`)).status).toBe(404);
    expect((await t.api.delete(`/v0/external-accounts/${a.id}`)).status).toBe(404);
    expect((await apiClient(tenant.liveSecret).get(`/v0/external-accounts/${a.id}`)).status).toBe(404);

    const del = await tenant.api.delete(`/v0/external-accounts/${a.id}`);
    expect(del.body.status).toBe('deleted');
    expect((await tenant.api.get(`/v0/external-accounts/${a.id}`)).body.status).toBe('deleted');
    expect(await ids('')).toEqual([b.id]);
    expect(await ids('?status=deleted')).toEqual([a.id]);
    expect((await tenant.api.delete(`/v0/external-accounts/${a.id}`)).status).toBe(409);
    const events = await tenant.api.get(`/v0/events?object_id=${a.id}`);
    expect(events.body.data.map((e: any) => e.event)).toEqual(['external_account.deleted', 'external_account.created']);
  });

  test('permissions: accounts:read reads, accounts:write links', async () => {
    const reader = apiClient((await t.key({ permissions: ['accounts:read'] })).key);
    expect((await reader.get('/v0/external-accounts')).status).toBe(200);
    expect((await reader.post('/v0/external-accounts', us())).status).toBe(403);
  });
});
