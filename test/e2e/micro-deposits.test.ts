import { apiClient, createTenant, individual, temporalClient, testDb, waitFor, wrongMicroDepositAmounts, type ApiClient, type Tenant } from '../harness';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import { verificationState } from '../../workflows/micro-deposit-messages';

let t: Tenant;
let customerId: string;
beforeAll(async () => {
  t = await createTenant();
  customerId = (await t.api.post('/v0/customers', individual())).body.id;
});

const usAccount = (accountNumber: string) => ({
  customer_id: customerId, type: 'us_bank_account', account_name: 'Jane Doe', routing_number: '021000021', account_number: accountNumber,
});
let accountCounter = 1000;
/** An account number beginning with 999: its micro-deposits wait for the ACH settlement schedule (on the sandbox clock). */
const newUsAccount = async (api: ApiClient = t.api) => (await api.post('/v0/external-accounts', usAccount(`999${String(++accountCounter).padStart(7, '0')}`))).body;

async function awaitingAmounts(accountId: string) {
  const client = await temporalClient();
  await waitFor(async () => (await client.workflow.getHandle(`external-account-verification:${accountId}`).query(verificationState)).phase === 'awaiting_amounts', {
    timeoutMs: 30_000, what: 'deposits settled',
  });
}

async function depositAmounts(accountId: string, api: ApiClient = t.api) {
  const list = await api.get(`/v0/sandbox/external-accounts/${accountId}/micro-deposits`);
  return list.body.data.filter((p: any) => p.direction === 'credit').map((p: any) => p.amount as string);
}

test('the sandbox verifies at once: the test amounts 0.32 and 0.45, answerable as soon as they are sent', async () => {
  const account = (await t.api.post('/v0/external-accounts', usAccount('000123456789'))).body;
  const started = Date.now();
  const res = await waitFor(async () => {
    const r = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.45', '0.32'] });
    return r.status === 200 ? r : undefined;
  }, { what: 'verification with the test amounts', timeoutMs: 10_000, intervalMs: 100 });
  expect(Date.now() - started).toBeLessThan(10_000);
  expect(res.body).toMatchObject({ status: 'verified', verification: { result: 'verified', attempts_remaining: 3 } });
  const payments = (await t.api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data;
  expect(payments.filter((p: any) => p.direction === 'credit').map((p: any) => p.amount).sort()).toEqual(['0.32', '0.45']);
  // The credits still settle on the ACH schedule; the recovery debit follows the answer.
  const recovered = await waitFor(async () => (await t.api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data.find((p: any) => p.direction === 'debit'));
  expect(recovered.amount).toBe('0.77');

  // Wrong amounts still count down the attempts.
  const other = (await t.api.post('/v0/external-accounts', usAccount('000123456790'))).body;
  const wrong = await waitFor(async () => {
    const r = await t.api.post(`/v0/external-accounts/${other.id}/verify`, { amounts: ['0.32', '0.44'] });
    return r.status === 200 ? r : undefined;
  }, { what: 'an answer taken', timeoutMs: 10_000, intervalMs: 100 });
  expect(wrong.body.verification).toEqual({ result: 'incorrect', attempts_remaining: 2 });
});

test('success: two credits, settlement, the right amounts in any order, then one recovery debit', async () => {
  const account = await newUsAccount();
  expect(account.status).toBe('pending_verification');
  // The workflow sends the deposits right after the account is created.
  const sent = await waitFor(async () => {
    const list = (await t.api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data;
    return list.length === 2 ? list : undefined;
  }, { what: 'two deposits' });
  for (const p of sent) {
    expect(p).toMatchObject({ direction: 'credit', currency: 'usd' });
    expect(Number(p.amount)).toBeGreaterThanOrEqual(0.01);
    expect(Number(p.amount)).toBeLessThanOrEqual(0.49);
  }
  const early = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.01', '0.02'] });
  expect(early.status).toBe(409);
  expect(early.body.error.message).toMatch(/not settled/);

  await awaitingAmounts(account.id);
  const amounts = await depositAmounts(account.id);
  const res = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: [...amounts].reverse() });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'verified', verification: { result: 'verified', attempts_remaining: 3 } });
  expect((await t.api.get(`/v0/external-accounts/${account.id}`)).body.status).toBe('verified');
  const again = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts });
  expect(again.status).toBe(409);

  const recovered = await waitFor(async () => {
    const list = (await t.api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data;
    return list.find((p: any) => p.direction === 'debit');
  });
  expect(Number(recovered.amount)).toBeCloseTo(Number(amounts[0]) + Number(amounts[1]), 2);
  const events = (await t.api.get(`/v0/events?object_id=${account.id}`)).body.data.map((e: any) => e.event);
  expect(events).toEqual(['external_account.verified', 'external_account.created']);
  const description = await (await temporalClient()).workflow.getHandle(`external-account-verification:${account.id}`).describe();
  expect(description.searchAttributes.CustomerId).toEqual([customerId]);
});

test('wrong amounts count down the attempts; the right ones still verify', async () => {
  const account = await newUsAccount();
  await awaitingAmounts(account.id);
  const right = await depositAmounts(account.id);
  const first = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: wrongMicroDepositAmounts(right) });
  expect(first.body).toMatchObject({ status: 'pending_verification', verification: { result: 'incorrect', attempts_remaining: 2 } });
  const second = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: wrongMicroDepositAmounts(right, '0.02') });
  expect(second.body.verification).toEqual({ result: 'incorrect', attempts_remaining: 1 });
  const third = await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: right });
  expect(third.body).toMatchObject({ status: 'verified', verification: { result: 'verified', attempts_remaining: 1 } });
});

test('three wrong attempts fail the verification; concurrent answers are serialised, none lost', async () => {
  const account = await newUsAccount();
  await awaitingAmounts(account.id);
  const wrong = wrongMicroDepositAmounts(await depositAmounts(account.id));
  const replies = await Promise.all([1, 2, 3].map(() => t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: wrong })));
  const remaining = replies.map((r) => r.body.verification.attempts_remaining).sort();
  expect(remaining).toEqual([0, 1, 2]);
  expect(replies.map((r) => r.body.verification.result).sort()).toEqual(['incorrect', 'incorrect', 'verification_failed']);
  const after = (await t.api.get(`/v0/external-accounts/${account.id}`)).body;
  expect(after).toMatchObject({ status: 'verification_failed', failure_reason: 'too_many_attempts' });
  expect((await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: wrong })).status).toBe(409);
  const events = (await t.api.get(`/v0/events?object_id=${account.id}&type=external_account.verification_failed`)).body.data;
  expect(events).toHaveLength(1);
});

test('no answer before the expiry fails the verification with reason expired', async () => {
  const account = await newUsAccount();
  await awaitingAmounts(account.id);
  // 14 days on the test stack's sandbox clock (43,200×) is 28 s.
  const failed = await waitFor(async () => {
    const a = (await t.api.get(`/v0/external-accounts/${account.id}`)).body;
    return a.status === 'verification_failed' ? a : undefined;
  }, { timeoutMs: 60_000, what: 'expiry' });
  expect(failed.failure_reason).toBe('expired');
  expect((await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.01', '0.02'] })).status).toBe(409);
}, 90_000);

test('verify refuses other account types, bad amounts, other tenants and live keys', async () => {
  const crypto = (await t.api.post('/v0/external-accounts', {
    customer_id: customerId, type: 'crypto_address', chain: 'ethereum', address: '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  })).body;
  const notUs = await t.api.post(`/v0/external-accounts/${crypto.id}/verify`, { amounts: ['0.01', '0.02'] });
  expect(notUs.status).toBe(409);
  expect(notUs.body.error.message).toMatch(/Only US bank accounts/);
  const account = await newUsAccount();
  expect((await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.1', '0.02'] })).body.error.source).toEqual({ location: 'body', key: 'amounts.0' });
  expect((await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.01', '0.50'] })).body.error.source).toEqual({ location: 'body', key: 'amounts.1' });
  expect((await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.01'] })).status).toBe(400);
  const other = await createTenant();
  expect((await other.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: ['0.01', '0.02'] })).status).toBe(404);
  expect((await other.api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).status).toBe(404);
  expect((await apiClient(t.liveSecret).get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).status).toBe(404);
});

describe('a worker killed between the two deposits', () => {
  // Two worker restarts on a loaded machine can outlast the stack's 28-s sandbox expiry (14 days at
  // SANDBOX_TIME_SCALE 43200): this file's API gives its verifications 600 s.
  const own = apiAndWorkerOfTheirOwn('crash', { MICRO_DEPOSIT_EXPIRY_HOURS: '7200' });

  test('restarts without a third deposit or a lost attempt, and verifies', async () => {
    own.startWorker();
    const crashApi = apiClient(t.secret, own.url());
    const account = (await crashApi.post('/v0/external-accounts', usAccount('7777777777'))).body;
    const deposits = () => testDb().selectFrom('rail_payments').select('id').where('external_account_id', '=', account.id).where('purpose', '=', 'micro_deposit').execute();
    // Poll tightly so the kill lands right after the first deposit, before the second in most runs.
    const deadline = Date.now() + 60_000;
    while ((await deposits()).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    own.killWorker();
    const atKill = (await deposits()).length;
    await new Promise((r) => setTimeout(r, 500));
    own.startWorker();
    // A query needs a running worker: true once the restarted one answers for the workflow.
    const awaitingAmounts = async () =>
      (await (await temporalClient()).workflow.getHandle(`external-account-verification:${account.id}`).query(verificationState)).phase === 'awaiting_amounts';
    await waitFor(async () => (await crashApi.get(`/v0/external-accounts/${account.id}`)).body.status === 'pending_verification' && awaitingAmounts(),
      { timeoutMs: 120_000, what: 'settled after restart' });
    expect(atKill).toBeGreaterThanOrEqual(1);
    process.stdout.write(`micro-deposit crash test: ${atKill} deposit(s) existed when the worker was killed\n`);
    expect(await deposits()).toHaveLength(2);
    const amounts = (await crashApi.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data.map((p: any) => p.amount);
    const wrong = await crashApi.post(`/v0/external-accounts/${account.id}/verify`, { amounts: wrongMicroDepositAmounts(amounts) });
    expect(wrong.body.verification.attempts_remaining).toBe(2);
    own.killWorker();
    own.startWorker();
    // Sent once the workflow answers again: while no worker runs, a verification answers 503 (after WORKFLOW_ANSWER_TIMEOUT_SECONDS).
    await waitFor(awaitingAmounts, { timeoutMs: 120_000, what: 'the restarted worker' });
    const right = await crashApi.post(`/v0/external-accounts/${account.id}/verify`, { amounts });
    expect(right.body).toMatchObject({ status: 'verified', verification: { result: 'verified', attempts_remaining: 2 } });
    expect(await deposits()).toHaveLength(2);
    // Three worker starts, each up to two minutes on a loaded machine (seen here), and the waits between them.
  }, 360_000);
});
