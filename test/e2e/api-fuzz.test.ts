import fc from 'fast-check';
import { sql } from 'kysely';
import { business, createTenant, documents, individual, stack, testDb, waitFor, type ApiResponse, type Tenant } from '../harness';
import { hostileRequest, knownPath, operationsOf, schemaRequest, type FuzzRequest, type KnownIds, type Operation } from '../harness/fuzz';
import { approvedCustomer, RECEIVER, tokenAddressOf } from '../harness/transfers';

// A seeded, repeatable fuzz of the whole API, driven by the OpenAPI document it publishes: every
// operation with its path parameters, list filters and bodies. FUZZ_SEED replays another run;
// FUZZ_RUNS scales it (a failure prints the seed and the request that failed).
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1);

// The conventions' error codes and their statuses (docs/CONVENTIONS.md, docs/API.md).
const STATUS_OF_CODE: Record<string, number> = {
  invalid_request: 400, unauthorized: 401, forbidden: 403, not_found: 404, method_not_allowed: 405, invalid_state: 409,
  idempotency_key_in_use: 409, payload_too_large: 413, unsupported_media_type: 415, idempotency_key_mismatch: 422,
  rate_limited: 429, daily_quota_exceeded: 429,
};

let t: Tenant;
let doc: any;
let operations: Operation[];
const known: KnownIds = {};
/** Valid bodies of the operations that write, by `METHOD template`: the fuzz changes one value at a time. */
let examples: Record<string, unknown[]> = {};

/** Everything stored for the tenant: row counts and the newest row version (xmin) of each table. */
async function everythingStored(): Promise<string> {
  const tables = ['customers', 'kyc_submissions', 'events', 'external_accounts', 'idempotency_keys', 'ledger_accounts',
    'ledger_transactions', 'payments', 'rail_payments', 'screening_batches', 'screenings', 'transfers', 'wallets', 'platform_accounts'];
  const parts = tables.map((name) => `(select count(*) || ':' || coalesce(max(xmin::text::bigint), 0) from ${name} where developer_id = '${t.developerId}')`);
  return (await sql<{ v: string }>`select ${sql.raw(parts.join(` || ' ' || `))} as v`.execute(testDb())).rows[0].v;
}

/**
 * Waits until the tenant's US bank accounts are done with their micro-deposits (verified and
 * recovered, or failed): their workflows write rows on their own time, and a "nothing stored" check
 * must not see them land between a request and its check.
 */
async function microDepositsSettled() {
  await waitFor(async () => {
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from external_accounts a
      where a.developer_id = ${t.developerId} and a.type = 'us_bank_account' and (a.status = 'pending_verification'
        or (a.status = 'verified' and not exists (select 1 from rail_payments r where r.external_account_id = a.id and r.purpose = 'micro_deposit_recovery')))`
      .execute(testDb());
    return rows[0].n === '0';
  }, { timeoutMs: 60_000, what: "the fuzz tenant's micro-deposit verifications to end" });
}

/** Rows only the API's own requests insert (workflows insert others on their own time). */
async function rowsRequestsInsert(): Promise<string> {
  const tables = ['customers', 'kyc_submissions', 'external_accounts', 'screening_batches', 'transfers'];
  const parts = tables.map((name) => `(select count(*) from ${name} where developer_id = '${t.developerId}')`);
  return (await sql<{ v: string }>`select ${sql.raw(parts.join(` || ' ' || `))} as v`.execute(testDb())).rows[0].v;
}

function send(req: FuzzRequest) {
  return t.api.request(req.method, req.url, req.body === undefined ? {} : { body: req.body });
}

/** No server error; an error is the shared envelope, its code matching its status. */
function expectWellFormed(req: FuzzRequest, res: ApiResponse) {
  const what = `${req.method} ${req.url} ${JSON.stringify(req.body)?.slice(0, 500)} → ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`;
  if (res.status >= 500) throw new Error(`server error: ${what}`);
  if (res.status >= 400) {
    if (STATUS_OF_CODE[res.body?.error?.code] !== res.status) throw new Error(`error code does not match its status: ${what}`);
    if (res.status === 400 && !res.body.error.source) throw new Error(`a 400 without source: ${what}`);
  }
}

beforeAll(async () => {
  // A key of the platform's operators reaches every route, the operators' own among them.
  t = await createTenant({ operators: true });
  doc = await (await fetch(`${stack().apiUrl}/v0/openapi.json`)).json();
  operations = operationsOf(doc);
  // Real objects for the path parameters and id fields to reach, settled before the fuzzing starts.
  const customer = await approvedCustomer(t.api, 'US');
  const other = (await t.api.post('/v0/customers', individual())).body;
  const account = (await t.api.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'crypto_address', chain: 'base', address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
  })).body;
  const transfer = (await t.api.post('/v0/transfers', {
    amount: '25.00', on_behalf_of: customer.id, source: { payment_rail: 'ach_push', currency: 'usd' },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' },
  })).body;
  const screening = (await t.api.post('/v0/sanctions/screen', { name: 'Jane Doe', customer_id: customer.id })).body;
  const batch = (await t.api.post('/v0/sanctions/screen/batch', { entities: [{ name: 'Jane Doe' }, { name: 'Acme GmbH', type: 'business' }] })).body;
  await waitFor(async () => (await t.api.get(`/v0/sanctions/screen/batch/${batch.id}`)).body.status === 'completed', { what: 'batch' });
  const wallet = (await t.api.post('/v0/wallets', { customer_id: customer.id, type: 'custodial', chains: ['base'] })).body;
  const platformAccount = (await t.api.post('/v0/accounts', { customer_id: customer.id, currency: 'usd' })).body;
  const event = (await t.api.get('/v0/events?limit=1')).body.data[0];
  Object.assign(known, {
    customer: [customer.id, other.id], external_account: [account.id], transfer: [transfer.id],
    screening: [screening.id], batch: [batch.id], event: [event.id], payment: [], wallet: [wallet.id], account: [platformAccount.id],
  });
  for (const [kind, ids] of Object.entries(known)) if (ids.some((id) => !id)) throw new Error(`fixture ${kind} not created`);
  const evm = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
  examples = {
    'POST /v0/customers': [individual(), business()],
    'PATCH /v0/customers/{customer_id}': [{ phone: '+14155550199' }, { address: { line1: '2 Market St', city: 'San Francisco', postal_code: '94105', country: 'US' } }],
    'POST /v0/customers/{customer_id}/kyc': [documents()],
    'POST /v0/sandbox/customers/{customer_id}/kyc_decision': [{ decision: 'approve', reasons: ['checked'] }, { decision: 'reject' }],
    'POST /v0/external-accounts': [
      { customer_id: customer.id, type: 'us_bank_account', account_name: 'Jane Doe', routing_number: '021000021', account_number: '123456789' },
      { customer_id: customer.id, type: 'international_bank_account', account_name: 'Jane Doe', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', bank_name: 'Commerzbank', bank_country: 'DE' },
      { customer_id: customer.id, type: 'crypto_address', chain: 'ethereum', address: evm, label: 'cold' },
    ],
    'POST /v0/external-accounts/{external_account_id}/verify': [{ amounts: ['0.32', '0.45'] }],
    'POST /v0/sanctions/screen': [{ name: 'Jane Doe', type: 'individual', country: 'US', date_of_birth: '1990-04-12', customer_id: customer.id }],
    'POST /v0/sanctions/screen/batch': [{ entities: [{ name: 'Jane Doe', country: 'US' }, { name: 'Acme GmbH', type: 'business' }] }],
    'POST /v0/transfers': [
      { amount: '25.00', on_behalf_of: customer.id, source: { payment_rail: 'ach_push', currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: evm } },
      { amount: '5.000001', on_behalf_of: customer.id, client_reference_id: 'inv-1', source: { payment_rail: 'ethereum', currency: 'usdc', from_address: evm },
        destination: { payment_rail: 'base', currency: 'usdc', to_address: evm } },
    ],
    'POST /v0/sandbox/transfers/{transfer_id}/deposit': [{}, { amount: '25.00' }, { amount: '3.00', sender_name: 'Jane Doe' }],
    'POST /v0/sandbox/transfers/{transfer_id}/review': [{ decision: 'approve', note: 'checked' }],
    'POST /v0/sandbox/transfers/{transfer_id}/return': [{ code: 'R01' }],
    'POST /v0/sandbox/transfers/{transfer_id}/retry_refund': [{}, { to_address: evm }],
  };
  for (const key of Object.keys(examples)) if (!operations.some((op) => `${op.method} ${op.template}` === key)) throw new Error(`no operation ${key}`);
}, 120_000);

test('every operation, parameter and filter of the OpenAPI document is fuzzed', () => {
  expect(operations.length).toBeGreaterThanOrEqual(30);
  expect(operations.filter((op) => op.method === 'POST' || op.method === 'PATCH').every((op) => op.body || op.pathParams.length)).toBe(true);
});

test('one breach of the text rule anywhere (body, filter, path): 400 naming it, nothing stored', async () => {
  await microDepositsSettled();
  // An operation that takes no input at all (GET /v0/balance) has no place for a breach.
  const withInput = operations.filter((op) => op.body || Object.keys(op.query).length > 0 || op.pathParams.length > 0);
  await fc.assert(fc.asyncProperty(fc.constantFrom(...withInput).chain((op) => hostileRequest(op, doc, known)), async (req) => {
    const before = await everythingStored();
    const res = await send(req);
    expectWellFormed(req, res);
    const what = `${req.method} ${req.url} ${JSON.stringify(req.body)?.slice(0, 300)} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
    if (res.status !== 400) throw new Error(`not a 400: ${what}`);
    expect({ what, source: res.body.error.source }).toEqual({ what, source: req.breach });
    expect({ what, stored: await everythingStored() }).toEqual({ what, stored: before });
  }), { seed: SEED, numRuns: 1500 * RUNS, endOnFailure: true });
}, 600_000);

test('values drawn from the schemas, valid or not: never a server error, always the envelope, nothing inserted by a refused request', async () => {
  await fc.assert(fc.asyncProperty(fc.constantFrom(...operations).chain((op) => schemaRequest(op, doc, known, examples[`${op.method} ${op.template}`])), async (req) => {
    const before = await rowsRequestsInsert();
    const res = await send(req);
    expectWellFormed(req, res);
    if (res.status >= 400) {
      const what = `${req.method} ${req.url} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
      expect({ what, inserted: await rowsRequestsInsert() }).toEqual({ what, inserted: before });
    }
  }), { seed: SEED, numRuns: 2500 * RUNS, endOnFailure: true });
}, 900_000);

/** `depth` levels of nesting as raw JSON (a JSON.stringify of such a value would overflow this process). */
function nested(depth: number, form: 'array' | 'object' | 'field'): string {
  if (form === 'array') return '['.repeat(depth) + ']'.repeat(depth);
  if (form === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  return `{"fuzz":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

test('JSON nested 10,000 and 200,000 deep on every operation that takes a body: 400 naming where, never a 500, nothing stored', async () => {
  await microDepositsSettled();
  const writes = operations.filter((op) => op.method === 'POST' || op.method === 'PATCH');
  for (const op of writes) {
    for (const [depth, form] of [[10_000, 'field'], [10_000, 'array'], [10_000, 'object'], [200_000, 'array'], [200_000, 'field']] as const) {
      const before = await everythingStored();
      const res = await t.api.request(op.method, knownPath(op, known), { rawBody: nested(depth, form), headers: { 'Content-Type': 'application/json' } });
      const what = `${op.method} ${op.template} ${form} ${depth}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect({ what, status: res.status, code: res.body.error?.code, location: res.body.error?.source?.location }).toEqual({ what, status: 400, code: 'invalid_request', location: 'body' });
      expect(res.body.error.message).toMatch(/nests deeper than 64 levels/);
      expect({ what, stored: await everythingStored() }).toEqual({ what, stored: before });
    }
  }
}, 300_000);

test('a JSON array where the body is an object, and amounts with leading zeros: 400, nothing stored', async () => {
  await microDepositsSettled();
  for (const op of operations.filter((o) => (o.method === 'POST' || o.method === 'PATCH') && o.body)) {
    const res = await t.api.request(op.method, knownPath(op, known), { body: [examples[`${op.method} ${op.template}`]?.[0] ?? {}] });
    expect({ op: op.template, status: res.status, location: res.body.error?.source?.location }).toEqual({ op: op.template, status: 400, location: 'body' });
  }
  const before = await everythingStored();
  const transfer = examples['POST /v0/transfers'][0] as Record<string, unknown>;
  for (const amount of ['00010.00', '010', '00.50', '+10.00', '-1.00', '1e1']) {
    const res = await t.api.post('/v0/transfers', { ...transfer, amount });
    expect({ amount, status: res.status, source: res.body.error?.source }).toEqual({ amount, status: 400, source: { location: 'body', key: 'amount' } });
  }
  const verify = await t.api.post(`/v0/external-accounts/${known.external_account[0]}/verify`, { amounts: ['00.32', '0.45'] });
  expect([verify.status, verify.body.error?.source?.location]).toEqual([400, 'body']);
  expect(await everythingStored()).toEqual(before);
});

test('the idempotency fingerprint ignores key order and whitespace: the same fields in another order replay', async () => {
  const key = `order-${Date.now()}`;
  const body = { name: 'Jane Doe', type: 'individual', country: 'US' };
  const first = await t.api.post('/v0/sanctions/screen', body, { idempotencyKey: key });
  expect(first.status).toBe(200);
  const reordered = await t.api.request('POST', '/v0/sanctions/screen', {
    rawBody: '{ "country" : "US",\n  "type":"individual", "name":   "Jane Doe" }', headers: { 'Content-Type': 'application/json' }, idempotencyKey: key,
  });
  expect(reordered.status).toBe(200);
  expect(reordered.headers.get('idempotent-replayed')).toBe('true');
  expect(reordered.body.id).toBe(first.body.id);
  const changed = await t.api.post('/v0/sanctions/screen', { ...body, country: 'DE' }, { idempotencyKey: key });
  expect(changed.status).toBe(422);
});

test('payee addresses that burn money are refused, naming the field: zero, dead and precompile addresses, a token contract', async () => {
  const before = await everythingStored();
  const transfer = examples['POST /v0/transfers'][0] as Record<string, any>;
  const token = tokenAddressOf('base', 'usdc');
  for (const address of ['0x0000000000000000000000000000000000000000', '0x000000000000000000000000000000000000dEaD', '0x0000000000000000000000000000000000000001', token]) {
    const res = await t.api.post('/v0/transfers', { ...transfer, destination: { ...transfer.destination, to_address: address } });
    expect({ address, status: res.status, source: res.body.error?.source }).toEqual({ address, status: 400, source: { location: 'body', key: 'destination.to_address' } });
    const account = await t.api.post('/v0/external-accounts', { customer_id: known.customer[0], type: 'crypto_address', chain: 'base', address });
    expect({ address, status: account.status, source: account.body.error?.source }).toEqual({ address, status: 400, source: { location: 'body', key: 'address' } });
  }
  for (const [chain, address] of [['solana', '1nc1nerator11111111111111111111111111111111'], ['solana', '11111111111111111111111111111111'], ['tron', 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb'],
    ['stellar', 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF'], ['bitcoin', '1111111111111111111114oLvT2']]) {
    const account = await t.api.post('/v0/external-accounts', { customer_id: known.customer[0], type: 'crypto_address', chain, address });
    expect({ address, status: account.status, source: account.body.error?.source }).toEqual({ address, status: 400, source: { location: 'body', key: 'address' } });
    expect(account.body.error.message).toMatch(/burn address/);
  }
  expect(await everythingStored()).toEqual(before);
});

test('standing routes name their own fields: an unknown currency, limits beyond what the rail and the column hold, a burning return address', async () => {
  const customer = known.customer[0];
  const nines = '9'.repeat(80);
  const toBase = { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER };
  const liquidation = { chain: 'base', currency: 'usdc', destination: toBase };
  const cases: [string, Record<string, unknown>, string][] = [
    ['liquidation_addresses', { ...liquidation, currency: 'zzzzz' }, 'currency'],
    ['liquidation_addresses', { ...liquidation, currency: 'xyz' }, 'currency'],
    ['liquidation_addresses', { ...liquidation, currency: 'eur' }, 'currency'],
    ['liquidation_addresses', { ...liquidation, chain: 'solana', currency: 'abcde' }, 'currency'],
    ['liquidation_addresses', { ...liquidation, limits: { per_day: nines } }, 'limits.per_day'],
    ['liquidation_addresses', { ...liquidation, limits: { per_deposit: nines } }, 'limits.per_deposit'],
    ['liquidation_addresses', { ...liquidation, limits: { per_deposit: '1000001.00' } }, 'limits.per_deposit'],
    ['liquidation_addresses', { ...liquidation, return_address: '0x0000000000000000000000000000000000000000' }, 'return_address'],
    ['liquidation_addresses', { ...liquidation, return_address: '0x000000000000000000000000000000000000dEaD' }, 'return_address'],
    ['virtual_accounts', { source: { currency: 'xyz' }, destination: toBase }, 'source.currency'],
    ['virtual_accounts', { source: { currency: 'usd', payment_rail: 'sepa' }, destination: toBase }, 'source.currency'],
    ['virtual_accounts', { source: { currency: 'usd' }, destination: toBase, limits: { per_day: nines } }, 'limits.per_day'],
    ['virtual_accounts', { source: { currency: 'usd' }, destination: toBase, limits: { per_deposit: nines } }, 'limits.per_deposit'],
  ];
  for (const [route, body, key] of cases) {
    const res = await t.api.post(`/v0/customers/${customer}/${route}`, body);
    expect({ route, body, status: res.status, source: res.body.error?.source }).toEqual({ route, body, status: 400, source: { location: 'body', key } });
  }
});

test('a route that takes no body refuses an array, even an empty one (sandbox routes included)', async () => {
  for (const body of [[], [1]]) {
    const res = await t.api.request('POST', `/v0/sandbox/customers/${known.customer[0]}/reactivate`, { body });
    expect([res.status, res.body.error?.message, res.body.error?.source]).toEqual([400, 'This route takes no request body', { location: 'body', key: '' }]);
  }
});

test("the text rule is one for every route, sandbox ones included: NUL is refused naming the field; markup is a value like any other, stored and answered as sent", async () => {
  const markup = '<script>alert(1)</script>';
  const customer = await t.api.post('/v0/customers', individual({ first_name: markup }));
  expect([customer.status, customer.body.first_name]).toEqual([201, markup]);
  const nul = await t.api.post(`/v0/sandbox/customers/${customer.body.id}/suspend`, { reason: 'fraud\u0000' });
  expect([nul.status, nul.body.error?.source]).toEqual([400, { location: 'body', key: 'reason' }]);
  const suspended = await t.api.post(`/v0/sandbox/customers/${customer.body.id}/suspend`, { reason: markup });
  expect([suspended.status, suspended.headers.get('content-type')]).toEqual([200, expect.stringContaining('application/json')]);
  expect(suspended.body.suspension).toMatchObject({ reason: markup });
});
