import { createCipheriv, randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { createApiKey, createDeveloper } from '../../src/admin/accounts';
import { ENCRYPTED_COLUMNS } from '../../src/admin/data-key-rotation';
import { DataCipher } from '../../src/crypto';
import { createDb, migrateToLatest, type Db } from '../../src/db';
import { apiClient, individual, runCli, stack, temporalClient, testDb, type ApiClient } from '../harness';
import { freePort, startProcess, stopProcess, waitUntilReady } from '../harness/stack';

// Rotating the data-at-rest key: the API runs on a database of its own (the rest of the suite keeps
// its key), through the production API process and the admin CLI.

const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const b64 = (k: Buffer) => k.toString('base64');
const dbName = `rotation_${process.pid}_${Date.now()}`;
let databaseUrl: string;
let db: Db;
let apiKey: string;
let api: ChildProcess | undefined;
const taskQueue = `rotation-${process.pid}`;
/** Workflows the API started that no worker of this database runs: terminated at the end. */
const kycWorkflows: string[] = [];

beforeAll(async () => {
  await sql`create database ${sql.id(dbName)}`.execute(testDb());
  const url = new URL(stack().processEnv.DATABASE_URL!);
  url.pathname = `/${dbName}`;
  databaseUrl = url.toString();
  db = createDb(databaseUrl, 2);
  await migrateToLatest(db);
  const dev = await createDeveloper(db, { name: 'rotation', rateLimitPerSecond: 10_000, dailyQuota: 1_000_000 });
  apiKey = (await createApiKey(db, { developerId: dev.id, environment: 'sandbox', kind: 'secret' })).key;
}, 60_000);

afterAll(async () => {
  if (api) await stopProcess(api);
  const client = await temporalClient();
  for (const id of kycWorkflows) await client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
  await db?.destroy();
  await sql`drop database if exists ${sql.id(dbName)} with (force)`.execute(testDb());
});

/** The production API on the rotation database with the given keys (no worker polls its task queue). */
async function startApi(env: Record<string, string>): Promise<ApiClient> {
  if (api) await stopProcess(api);
  const port = await freePort();
  api = startProcess('api-rotation', path.join(__dirname, '../../src/main/api.ts'), {
    ...stack().processEnv, PORT: String(port), DATABASE_URL: databaseUrl, TEMPORAL_TASK_QUEUE: taskQueue, DATA_ENCRYPTION_PREVIOUS_KEYS: '', ...env,
  }, stack().logDir);
  await waitUntilReady(`http://127.0.0.1:${port}/healthz`, api, 60_000);
  return apiClient(apiKey, `http://127.0.0.1:${port}`);
}

function rotate() {
  return runCli(['data', 'rotate-key'], { DATABASE_URL: databaseUrl, DATA_ENCRYPTION_KEY: b64(newKey), DATA_ENCRYPTION_PREVIOUS_KEYS: b64(oldKey) });
}

const iban = { type: 'international_bank_account', account_name: 'Erika Mustermann', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', bank_name: 'Commerzbank', bank_country: 'DE' };

test('every encrypted column is rotated', async () => {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
    where table_schema = 'public' and column_name like '%\\_encrypted' order by 1, 2`.execute(db);
  expect(rows.map((r) => `${r.table_name}.${r.column_name}`)).toEqual(ENCRYPTED_COLUMNS.map(([t, c]) => `${t}.${c}`).sort());
});

test('a new key encrypts while the old one still reads; rotate-key moves every value and fingerprint to the new key, then the old key can go', async () => {
  // Before: everything under the old key.
  let client = await startApi({ DATA_ENCRYPTION_KEY: b64(oldKey) });
  const customer = (await client.post('/v0/customers', individual({ tax_id: '123-45-6789' }))).body;
  kycWorkflows.push(`kyc:${customer.id}`);
  expect((await client.post('/v0/external-accounts', { customer_id: customer.id, ...iban })).status).toBe(201);
  const wallet = { customer_id: customer.id, type: 'crypto_address', chain: 'base', address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' };
  expect((await client.post('/v0/external-accounts', wallet)).status).toBe(201);
  // A webhook endpoint in the middle of a secret rotation: both of its secrets are encrypted.
  const webhook = await client.post('/v0/webhooks', { url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'] });
  kycWorkflows.push(`webhook-endpoint:${webhook.body.id}`);
  const rotatedSecret = (await client.post(`/v0/webhooks/${webhook.body.id}/rotate_secret`, { expires_in_hours: 24 })).body.secret;

  // The new key is current, the old one previous: an account linked under the old key is still found.
  client = await startApi({ DATA_ENCRYPTION_KEY: b64(newKey), DATA_ENCRYPTION_PREVIOUS_KEYS: b64(oldKey) });
  const again = await client.post('/v0/external-accounts', { customer_id: customer.id, ...iban });
  expect(again.status).toBe(409);
  expect(again.body.error.message).toMatch(/already linked/);
  const second = await client.post('/v0/customers', individual({ tax_id: '987-65-4321' }));
  kycWorkflows.push(`kyc:${second.body.id}`);

  const newId = new DataCipher(newKey).currentKeyId;
  const oldId = new DataCipher(oldKey).currentKeyId;
  const taxIds = await db.selectFrom('customers').select(['id', 'tax_id_encrypted']).execute();
  expect(taxIds.find((r) => r.id === customer.id)!.tax_id_encrypted).toMatch(new RegExp(`^v2:${oldId}:`));
  expect(taxIds.find((r) => r.id === second.body.id)!.tax_id_encrypted).toMatch(new RegExp(`^v2:${newId}:`));

  const run = rotate();
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('customers.tax_id_encrypted: 1 re-encrypted');
  expect(run.stdout).toContain('external_accounts.number_encrypted: 1 re-encrypted');
  expect(run.stdout).toContain('external_accounts.fingerprint: 2 re-computed');
  expect(run.stdout).toContain('webhook_endpoints.secret_encrypted: 1 re-encrypted');
  expect(run.stdout).toContain('webhook_endpoints.previous_secret_encrypted: 1 re-encrypted');

  // Every value now under the new key alone, and still the same data.
  for (const [table, column] of ENCRYPTED_COLUMNS) {
    const { rows } = await sql<{ value: string }>`select ${sql.ref(column)} as value from ${sql.table(table)} where ${sql.ref(column)} is not null`.execute(db);
    for (const { value } of rows) expect(value.startsWith(`v2:${newId}:`)).toBe(true);
  }
  const newOnly = new DataCipher(newKey);
  const endpoint = await db.selectFrom('webhook_endpoints').select('secret_encrypted').where('id', '=', webhook.body.id).executeTakeFirstOrThrow();
  expect(newOnly.decryptText(endpoint.secret_encrypted)).toBe(rotatedSecret);
  const stored = await db.selectFrom('customers').select('tax_id_encrypted').where('id', '=', customer.id).executeTakeFirstOrThrow();
  expect(newOnly.decryptText(stored.tax_id_encrypted!)).toBe('123-45-6789');
  const accounts = await db.selectFrom('external_accounts').select(['fingerprint', 'number_encrypted']).execute();
  expect(accounts.every((a) => a.fingerprint.startsWith(`${newId}:`))).toBe(true);
  expect(accounts.map((a) => a.number_encrypted && newOnly.decryptText(a.number_encrypted)).filter(Boolean)).toEqual(['DE89370400440532013000']);

  // The old key gone: duplicates are still found, and a second run has nothing to do.
  client = await startApi({ DATA_ENCRYPTION_KEY: b64(newKey) });
  expect((await client.post('/v0/external-accounts', { customer_id: customer.id, ...iban })).status).toBe(409);
  expect((await client.post('/v0/external-accounts', wallet)).status).toBe(409);
  const rerun = rotate();
  expect(rerun.status).toBe(0);
  expect(rerun.stdout).toContain('customers.tax_id_encrypted: 0 re-encrypted');
  expect(rerun.stdout).toContain('external_accounts.fingerprint: 0 re-computed');
}, 180_000);

test('without the old key, data under it is refused with a message that names the setting', () => {
  const stored = new DataCipher(oldKey).encrypt('secret');
  expect(() => new DataCipher(newKey).decrypt(stored)).toThrow(/DATA_ENCRYPTION_PREVIOUS_KEYS/);
  expect(new DataCipher(newKey, [oldKey]).decryptText(stored)).toBe('secret');
});

test('values of the first format (v1, no key id) are read with each configured key', () => {
  // Written as the first releases did: v1:<nonce>:<tag>:<ciphertext>, under the old key.
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', oldKey, nonce);
  const body = Buffer.concat([cipher.update('legacy secret'), cipher.final()]);
  const legacy = ['v1', nonce, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64'))).join(':');
  expect(new DataCipher(newKey, [oldKey]).decryptText(legacy)).toBe('legacy secret');
  expect(() => new DataCipher(newKey).decrypt(legacy)).toThrow(/DATA_ENCRYPTION_PREVIOUS_KEYS/);
});
