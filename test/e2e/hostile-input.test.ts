import fs from 'node:fs';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { sql } from 'kysely';
import { StuckActivityAttr } from '../../src/temporal/search-attributes';
import { decideManualReview } from '../../workflows/kyc-messages';
import { decideReview } from '../../workflows/transfer-messages';
import { apiClient, createTenant, documents, individual, runCli, stack, temporalClient, testDb, waitFor, waitForKycStatus, type ApiClient, type Tenant } from '../harness';
import { freePort, startProcess, stopProcess, waitUntilReady } from '../harness/stack';
import { achToWireFor, approvedCustomer, expectLedgerBalanced, verifiedUsAccount, sandboxDeposit, waitForTransferState } from '../harness/transfers';

// Data no workflow can store never wedges one: refused at the edge with a 400, refused by the
// workflow if it gets there anyway, and an activity that keeps failing raises an alarm operators see.

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

/** A customer whose KYC waits for a compliance operator (the sandbox's `kyc_manual` e-mail). */
async function customerInManualReview(api: ApiClient = t.api) {
  const c = (await api.post('/v0/customers', individual({ email: `kyc_manual.hostile.${Date.now()}@example.com` }))).body;
  await api.post(`/v0/customers/${c.id}/kyc`, documents());
  return waitForKycStatus(api, c.id, 'manual_review');
}

/** Makes PostgreSQL refuse, with a retryable error, the write that approves `customerId`, until `heal()`. */
async function failApprovalOf(customerId: string) {
  const db = testDb();
  const fn = `fail_approval_${customerId.toLowerCase()}`;
  await sql.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin
    if new.id = '${customerId}' and new.kyc_status = 'approved' then raise exception 'simulated outage' using errcode = '40001'; end if;
    return new; end $$`).execute(db);
  await sql.raw(`create trigger ${fn} before update on customers for each row execute function ${fn}()`).execute(db);
  return { heal: () => sql.raw(`drop trigger if exists ${fn} on customers; drop function if exists ${fn}()`).execute(db) };
}

/** What an Update sent straight to a workflow (past the API's validation) was answered. */
async function updateRefusal(send: () => Promise<unknown>) {
  const err = await send().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  return (err as WorkflowUpdateFailedError).cause as { type?: string; message: string };
}

test('a KYC decision with a NUL byte: 400 at the edge; sent to the workflow anyway, refused; a clean decision then approves', async () => {
  const c = await customerInManualReview();
  const poisoned = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'approve', reasons: ['checked\u0000'] });
  expect(poisoned.status).toBe(400);
  expect(poisoned.body.error).toMatchObject({ code: 'invalid_request', source: { location: 'body', key: 'reasons.0' } });
  expect(poisoned.body.error.message).toMatch(/NUL/);

  const handle = (await temporalClient()).workflow.getHandle(`kyc:${c.id}`);
  const refusal = await updateRefusal(() => handle.executeUpdate(decideManualReview, { args: [{ decision: 'approve', reasons: ['checked\u0000'], operator: 'test' }] }));
  expect(refusal.type).toBe('InvalidData');
  expect(refusal.message).toMatch(/^The decision was not recorded: PostgreSQL refused the data \(SQLSTATE 22/);
  expect((await t.api.get(`/v0/customers/${c.id}`)).body.kyc_status).toBe('manual_review');

  const clean = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'approve', reasons: ['checked'] });
  expect(clean.status).toBe(200);
  expect(clean.body.kyc_status).toBe('approved');
  expect(await handle.result()).toBe('approved');
});

describe('a transfer held in review', () => {
  let tr: { id: string };
  beforeAll(async () => {
    const us = await approvedCustomer(t.api, 'US');
    const account = await verifiedUsAccount(t.api, us.id);
    // .15: the sandbox holds it in review.
    tr = (await t.api.post('/v0/transfers', achToWireFor(us, account, '61.15'))).body;
    await sandboxDeposit(t.api, tr.id);
    await waitFor(async () => (await t.api.get(`/v0/transfers/${tr.id}`)).body.review_reasons, { what: 'hold' });
  }, 120_000);
  afterAll(expectLedgerBalanced);

  test('a review note with a NUL byte: 400 at the edge; sent anyway, refused, still held; a clean approval pays out', async () => {
    const poisoned = await t.api.post(`/v0/sandbox/transfers/${tr.id}/review`, { decision: 'approve', note: 'ok\u0000' });
    expect(poisoned.status).toBe(400);
    expect(poisoned.body.error.source).toEqual({ location: 'body', key: 'note' });

    const handle = (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`);
    const refusal = await updateRefusal(() => handle.executeUpdate(decideReview, { args: [{ approve: true, note: 'ok\u0000', operator: 'test' }] }));
    expect(refusal.type).toBe('InvalidData');
    expect(refusal.message).toMatch(/^The decision was not recorded: PostgreSQL refused the data/);
    const held = (await t.api.get(`/v0/transfers/${tr.id}`)).body;
    expect(held.state).toBe('in_review');
    expect(held.review_decision).toBeNull();

    expect((await t.api.post(`/v0/sandbox/transfers/${tr.id}/review`, { decision: 'approve', note: 'checked' })).status).toBe(200);
    const paid = await waitForTransferState(t.api, tr.id, 'payment_processed');
    expect(paid.review_decision).toMatchObject({ decision: 'approve', note: 'checked' });
  });
});

test('an activity that keeps failing raises StuckActivity, is listed by `workflows stuck`, and clears once it succeeds', async () => {
  const c = await customerInManualReview();
  // A fault only this customer's approval meets: PostgreSQL refuses the write with a retryable error.
  const fault = await failApprovalOf(c.id);
  try {
    // The decision is taken; recording it fails until the fault is gone (the request times out).
    const decided = await t.api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'approve' });
    expect([200, 503]).toContain(decided.status);
    const handle = (await temporalClient()).workflow.getHandle(`kyc:${c.id}`);
    await waitFor(async () => (await handle.describe()).typedSearchAttributes.get(StuckActivityAttr) === 'recordKycStatus',
      { what: 'the StuckActivity alarm', timeoutMs: 60_000, intervalMs: 500 });
    const listed = runCli(['workflows', 'stuck']);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`kyc:${c.id}  kycWorkflow  started \\S+  retrying: recordKycStatus`));
    expect((await t.api.get(`/v0/customers/${c.id}`)).body.kyc_status).toBe('manual_review');
  } finally {
    await fault.heal();
  }
  await waitForKycStatus(t.api, c.id, 'approved', 60_000);
  const handle = (await temporalClient()).workflow.getHandle(`kyc:${c.id}`);
  expect(await handle.result()).toBe('approved');
  expect((await handle.describe()).typedSearchAttributes.get(StuckActivityAttr)).toBeUndefined();
  expect(runCli(['workflows', 'stuck']).stdout).not.toContain(c.id);
}, 180_000); // its own waits add up to two minutes, and two CLI runs: more than the default 90 s on a loaded machine

test('a worker stopped while a local activity retries stops at once; a new worker finishes the work', async () => {
  // An API and a worker of their own, on a task queue of their own.
  const env = { ...stack().processEnv, TEMPORAL_TASK_QUEUE: `retrying-stop-${process.pid}`, WORKFLOW_ANSWER_TIMEOUT_SECONDS: '1' };
  const port = await freePort();
  const apiProcess = startProcess('api-retrying-stop', path.join(__dirname, '../../src/main/api.ts'), { ...env, PORT: String(port) }, stack().logDir);
  const startWorker = (name: string) => startProcess(name, path.join(__dirname, '../../workers/main.ts'), env, stack().logDir);
  let worker = startWorker('worker-retrying-stop');
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, apiProcess, 60_000);
    const api = apiClient(t.secret, `http://127.0.0.1:${port}`);
    const c = await customerInManualReview(api);
    const fault = await failApprovalOf(c.id);
    try {
      expect((await api.post(`/v0/sandbox/customers/${c.id}/kyc_decision`, { decision: 'approve' })).status).toBe(503);
      // The approval's write has been failing for a second, retried inside its workflow task.
      const stopping = Date.now();
      const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - stopping).toBeLessThan(8_000);
      expect(fs.readFileSync(path.join(stack().logDir, 'worker-retrying-stop.log'), 'utf8')).not.toMatch(/stop forced|still stopping/);
    } finally {
      await fault.heal();
    }
    worker = startWorker('worker-retrying-stop-2');
    await waitForKycStatus(api, c.id, 'approved', 60_000);
  } finally {
    await Promise.all([stopProcess(worker), stopProcess(apiProcess)]);
  }
}, 180_000);

describe('the text rule, undecodable paths, crafted cursors and amounts: a 400 naming the field, nothing stored', () => {
  const cursor = (value: unknown) => `cur_${Buffer.from(JSON.stringify(value)).toString('base64url')}`;
  const cases: [string, string, string, unknown, { location: string; key: string }, RegExp][] = [
    ['NUL in a name', 'POST', '/v0/customers', individual({ first_name: 'Ja\u0000ne' }), { location: 'body', key: 'first_name' }, /NUL/],
    ['lone surrogate in a nested field', 'POST', '/v0/customers', individual({ address: { line1: '1 Main', city: 'SF\ud800', country: 'US' } }),
      { location: 'body', key: 'address.city' }, /unpaired UTF-16 surrogates/],
    ['a low surrogate alone', 'POST', '/v0/customers', individual({ last_name: '\udc00Doe' }), { location: 'body', key: 'last_name' }, /surrogates/],
    ['NUL in an object key', 'POST', '/v0/customers', { ...individual(), 'x\u0000': 1 }, { location: 'body', key: 'x\u0000' }, /field names/],
    ['an empty screening customer_id', 'POST', '/v0/sanctions/screen', { name: 'Jane Doe', customer_id: '' }, { location: 'body', key: 'customer_id' }, /must not be empty/],
    ['NUL in a list filter', 'GET', '/v0/customers?email=a%00b', undefined, { location: 'query', key: 'email' }, /NUL/],
    ['an empty list filter', 'GET', '/v0/transfers?on_behalf_of=', undefined, { location: 'query', key: 'on_behalf_of' }, /must not be empty/],
    ['NUL in a path parameter', 'GET', '/v0/customers/%00', undefined, { location: 'path', key: 'customer_id' }, /NUL/],
    ['a lone % in a path parameter', 'GET', '/v0/transfers/%', undefined, { location: 'path', key: 'transfer_id' }, /percent-encoding/],
    ['a truncated UTF-8 sequence', 'GET', '/v0/transfers/%E0%A4%A', undefined, { location: 'path', key: 'transfer_id' }, /percent-encoding/],
    ['an overlong UTF-8 encoding', 'DELETE', '/v0/customers/%C0%AF', undefined, { location: 'path', key: 'customer_id' }, /percent-encoding/],
    ['bytes that are not UTF-8', 'GET', '/v0/external-accounts/%FF%FE', undefined, { location: 'path', key: 'external_account_id' }, /percent-encoding/],
    ['a cursor in the year -271821', 'GET', `/v0/customers?cursor=${cursor(['-271821-04-20T00:00:00.000Z', 'cus_1'])}`, undefined,
      { location: 'query', key: 'cursor' }, /cursor/],
    ['a cursor with a NUL in its id', 'GET', `/v0/transfers?cursor=${cursor(['2026-01-01T00:00:00.000Z', 'tr_\u0000'])}`, undefined,
      { location: 'query', key: 'cursor' }, /cursor/],
    ['a batch cursor past any index', 'GET', '/v0/sanctions/screen/batch/sbat_x?cursor=cur_99999999999999999999', undefined,
      { location: 'query', key: 'cursor' }, /cursor/],
  ];
  test.each(cases)('%s', async (_name, method, path, body, source, message) => {
    const count = async () => Number((await sql<{ n: string }>`select (select count(*) from customers where developer_id = ${t.developerId})
      + (select count(*) from screenings where developer_id = ${t.developerId}) as n`.execute(testDb())).rows[0].n);
    const before = await count();
    const res = await t.api.request(method, path, { body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', source });
    expect(res.body.error.message).toMatch(message);
    expect(await count()).toBe(before);
  });

  test('an empty document on a KYC submission is refused, and KYC does not move', async () => {
    const c = (await t.api.post('/v0/customers', individual())).body;
    const res = await t.api.post(`/v0/customers/${c.id}/kyc`, { ...documents(), document_front: '' });
    expect(res.status).toBe(400);
    expect(res.body.error.source).toEqual({ location: 'body', key: 'document_front' });
    expect(await testDb().selectFrom('kyc_submissions').select('id').where('customer_id', '=', c.id).execute()).toEqual([]);
    expect((await t.api.get(`/v0/customers/${c.id}`)).body.kyc_status).toBe('not_started');
  });

  test('a sandbox deposit of more than its rail carries in one payment', async () => {
    const us = await approvedCustomer(t.api, 'US');
    const tr = (await t.api.post('/v0/transfers', {
      amount: '10.00', on_behalf_of: us.id, source: { payment_rail: 'ach_push', currency: 'usd' },
      destination: { payment_rail: 'base', currency: 'usdc', to_address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' },
    })).body;
    const res = await t.api.post(`/v0/sandbox/transfers/${tr.id}/deposit`, { amount: '99999999999999999.00' });
    expect(res.status).toBe(400);
    expect(res.body.error.source).toEqual({ location: 'body', key: 'amount' });
    expect(res.body.error.message).toBe('ach_push carries at most 1000000.00 usd in one payment');
    expect((await t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data).toEqual([]);
    expect((await t.api.get(`/v0/transfers/${tr.id}`)).body.state).toBe('awaiting_funds');
  });
});
