import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createClient, FinancialPlatformError } from '../../sdk/src';
import { buildOpenApiDocument } from '../../src/api/openapi';
import { allRoutes } from '../../src/resources';
import { EVENT_PAYLOADS } from '../../src/resources/events/payloads';
import { createTenant, documents, stack } from '../harness';
import { RECEIVER } from '../harness/transfers';

// The TypeScript SDK in sdk/ (its own package): its document is the one the API serves, its
// generated types refuse what the API refuses, and a whole customer → KYC → transfer flow runs
// through it against the real stack.

const sdk = path.join(__dirname, '../../sdk');
const run = (command: string, args: string[]) => spawnSync(command, args, { cwd: sdk, encoding: 'utf8' });

test('sdk/openapi.json is the document the API serves (regenerate it with scripts/openapi-document.ts)', () => {
  const current = buildOpenApiDocument(allRoutes, 'https://api.financial-platform.io', EVENT_PAYLOADS);
  expect(JSON.parse(readFileSync(path.join(sdk, 'openapi.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(current)));
});

test('types generated from the document at build time; the calls the API refuses do not compile', () => {
  const generated = run('node', ['scripts/generate.mjs']);
  expect(generated.stderr).toBe('');
  expect(generated.status).toBe(0);
  // test/compile-errors.ts marks each refused call with @ts-expect-error: tsc fails if one compiles.
  const compiled = run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'test/tsconfig.json', '--noEmit']);
  expect(compiled.stdout + compiled.stderr).toBe('');
  expect(compiled.status).toBe(0);
  const source = readFileSync(path.join(sdk, 'test/compile-errors.ts'), 'utf8');
  expect(source.match(/@ts-expect-error/g)?.length).toBeGreaterThanOrEqual(8);
}, 120_000);

test("the SDK's own tests: retries with one Idempotency-Key, typed errors, pagination, webhook signatures", () => {
  const tested = run(process.execPath, ['--test', '--import', 'tsx', 'test/client.test.ts']);
  expect(tested.stdout).toMatch(/# pass 4\n# fail 0/);
  expect(tested.status).toBe(0);
}, 60_000);

test('customer → KYC → transfer through the SDK, to the payout', async () => {
  const t = await createTenant();
  const client = createClient({ apiKey: t.secret, baseUrl: stack().apiUrl, retryBaseMs: 100 });
  const customer = client.unwrap(await client.POST('/v0/customers', {
    body: {
      type: 'individual', email: `sdk.${Date.now()}@example.com`, first_name: 'Jane', last_name: 'Doe', date_of_birth: '1990-04-12',
      address: { line1: '1 Market St', city: 'San Francisco', postal_code: '94105', country: 'US' },
    },
  }));
  client.unwrap(await client.POST('/v0/customers/{customer_id}/kyc', { params: { path: { customer_id: customer.id } }, body: documents() as never }));
  let kyc = '';
  for (let i = 0; i < 300 && kyc !== 'approved'; i++) {
    kyc = client.unwrap(await client.GET('/v0/customers/{customer_id}', { params: { path: { customer_id: customer.id } } })).kyc_status;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(kyc).toBe('approved');

  // A refused call is a typed error naming the field.
  const refused = await client.POST('/v0/transfers', {
    body: { amount: '00010.00', on_behalf_of: customer.id, source: { payment_rail: 'ach_push', currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } },
  });
  expect(() => client.unwrap(refused)).toThrow(FinancialPlatformError);
  expect(refused.error?.error.source).toEqual({ location: 'body', key: 'amount' });

  const transfer = client.unwrap(await client.POST('/v0/transfers', {
    body: { amount: '25.00', on_behalf_of: customer.id, source: { payment_rail: 'ach_push', currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } },
  }));
  expect(transfer.state).toBe('awaiting_funds');
  client.unwrap(await client.POST('/v0/sandbox/transfers/{transfer_id}/deposit', { params: { path: { transfer_id: transfer.id } }, body: {} }));
  let state = '';
  for (let i = 0; i < 600 && state !== 'payment_processed'; i++) {
    state = client.unwrap(await client.GET('/v0/transfers/{transfer_id}', { params: { path: { transfer_id: transfer.id } } })).state;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(state).toBe('payment_processed');
  const listed: string[] = [];
  for await (const t2 of client.paginate((cursor) => client.GET('/v0/transfers', { params: { query: { cursor, limit: 1 } } }))) listed.push(t2.id);
  expect(listed).toEqual([transfer.id]);
}, 120_000);
