import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { apiClient, stack, runCli, temporalClient, testDb, waitFor, type ApiClient } from '../harness';
import { approvedCustomer, RECEIVER, transferTestParties, verifiedUsAccount, waitForTransferState } from '../harness/transfers';
import { freePort, startProcess, stopProcess, waitUntilReady } from '../harness/stack';
import { transferStatus } from '../../workflows/transfer-messages';

// Transfers held in review and canceled: holds and decisions, cancellation by the API or in Temporal, deposits that never come.
// (HTTP → API → PostgreSQL → Temporal → rail simulators and local anvil chains.)

const { parties: p, achToWire, deposit } = transferTestParties();
const receiver = RECEIVER;

test('cancel while awaiting funds: canceled, nothing moved; a later deposit is refused', async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('40.00'))).body;
  const res = await p.t.api.delete(`/v0/transfers/${tr.id}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ state: 'canceled', state_reason: 'canceled_by_developer' });
  expect((await p.t.api.delete(`/v0/transfers/${tr.id}`)).status).toBe(409);
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/deposit`)).status).toBe(409);
  expect((await p.t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data).toEqual([]);
  expect(await testDb().selectFrom('ledger_transactions').select('id').where('reference_id', '=', tr.id).execute()).toEqual([]);
});

test('review hold (.15): the reason shows; rejecting refunds the deposit and cancels', async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('60.15'))).body;
  await deposit(tr.id);
  const held = await waitFor(async () => {
    const x = (await p.t.api.get(`/v0/transfers/${tr.id}`)).body;
    return x.review_reasons ? x : undefined;
  });
  expect(held.state).toBe('in_review');
  expect(held.review_reasons).toEqual([expect.stringMatching(/^sandbox_review/)]);
  expect(held.state_reason).toMatch(/^on_hold: sandbox_review/);
  const description = await (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`).describe();
  expect(description.searchAttributes.TransferState).toEqual(['in_review']);
  expect(held.review_decision).toBeNull();
  const rejected = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/review`, { decision: 'reject', note: 'unusual pattern' });
  expect(rejected.status).toBe(200);
  // The audit record: what was decided and when for the API; who decided, in the database only.
  expect(rejected.body.review_decision).toEqual({ decision: 'reject', note: 'unusual pattern', decided_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  const stored = await testDb().selectFrom('transfers').select('review_decision').where('id', '=', tr.id).executeTakeFirstOrThrow();
  expect(stored.review_decision).toMatchObject({ decision: 'reject', operator: expect.stringMatching(/^sandbox:key_/) });
  const decided = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated`)).body.data
    .filter((e: any) => 'review_decision' in e.data.previous_attributes);
  expect(decided).toHaveLength(1);
  expect(decided[0].data.previous_attributes).toEqual({ review_decision: null });
  expect(decided[0].data.review_decision).toMatchObject({ decision: 'reject' });
  const canceled = await waitForTransferState(p.t.api, tr.id, 'canceled');
  expect(canceled.state_reason).toBe('rejected_in_review: unusual pattern');
  const payments = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data;
  expect(payments.map((p: any) => [p.kind, p.status]).sort()).toEqual([['deposit', 'settled'], ['refund', 'settled']]);
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/review`, { decision: 'approve' })).status).toBe(409);
});

test('review hold approved pays out; cancel in review refunds; no cancel once the payout is submitted', async () => {
  const approved = (await p.t.api.post('/v0/transfers', achToWire('70.15'))).body;
  const toCancel = (await p.t.api.post('/v0/transfers', achToWire('71.15'))).body;
  await deposit(approved.id);
  await deposit(toCancel.id);
  for (const id of [approved.id, toCancel.id]) await waitFor(async () => (await p.t.api.get(`/v0/transfers/${id}`)).body.review_reasons, { what: 'hold' });
  // The production operator path: the admin CLI.
  const cli = runCli(['transfers', 'review', approved.id, '--decision', 'approve', '--note', 'known customer', '--operator', 'ops.alice']);
  expect(cli.status).toBe(0);
  expect(cli.stdout).toMatch(new RegExp(`${approved.id}: (in_review|payment_submitted|payment_processed)`));
  const paid = await waitForTransferState(p.t.api, approved.id, 'payment_processed');
  expect(paid.review_decision).toMatchObject({ decision: 'approve', note: 'known customer' });
  expect(paid.review_decision.operator).toBeUndefined();
  const stored = await testDb().selectFrom('transfers').select('review_decision').where('id', '=', approved.id).executeTakeFirstOrThrow();
  expect(stored.review_decision?.operator).toBe('ops.alice');
  expect((await p.t.api.delete(`/v0/transfers/${approved.id}`)).body.error.code).toBe('invalid_state');

  const cancel = await p.t.api.delete(`/v0/transfers/${toCancel.id}`);
  expect(cancel.status).toBe(200);
  const canceled = await waitForTransferState(p.t.api, toCancel.id, 'canceled');
  expect(canceled.state_reason).toBe('canceled_by_developer');
  const refund = (await p.t.api.get(`/v0/payments?transfer_id=${toCancel.id}&kind=refund`)).body.data[0];
  expect(refund).toMatchObject({ payment_rail: 'ach', amount: '71.15', status: 'settled' });
});

test('a payout to a listed digital-currency address is held with the listing named', async () => {
  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '15.00', on_behalf_of: p.us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: '0x7F367cC41522cE07553e823bf3be79A889DEbe1B' },
  })).body;
  await deposit(tr.id);
  const held = await waitFor(async () => (await p.t.api.get(`/v0/transfers/${tr.id}`)).body.review_reasons && (await p.t.api.get(`/v0/transfers/${tr.id}`)).body);
  expect(held.review_reasons).toEqual([expect.stringMatching(/^sanctioned_address: the destination address 0x7F367cC41522cE07553e823bf3be79A889DEbe1B is listed for .+ \(us_ofac_sdn\)$/)]);
  expect((await p.t.api.delete(`/v0/transfers/${tr.id}`)).status).toBe(200);
  await waitForTransferState(p.t.api, tr.id, 'canceled');
});

test('cancelling the workflow in Temporal: while on hold the funds go back; once the payout is out it still finishes', async () => {
  const client = await temporalClient();
  const held = (await p.t.api.post('/v0/transfers', achToWire('44.15'))).body;
  await deposit(held.id);
  await waitFor(async () => (await p.t.api.get(`/v0/transfers/${held.id}`)).body.review_reasons, { what: 'hold' });
  const status = await client.workflow.getHandle(`transfer:${held.id}`).query(transferStatus);
  expect(status).toMatchObject({ state: 'in_review', step: 'On hold: waiting for an operator decision', holdReasons: [expect.stringMatching(/^sandbox_review/)] });
  await client.workflow.getHandle(`transfer:${held.id}`).cancel();
  const canceled = await waitForTransferState(p.t.api, held.id, 'canceled');
  expect(canceled.state_reason).toBe('workflow_canceled');
  expect((await p.t.api.get(`/v0/payments?transfer_id=${held.id}&kind=refund`)).body.data[0].status).toBe('settled');

  const paying = (await p.t.api.post('/v0/transfers', achToWire('45.00'))).body;
  await deposit(paying.id);
  await waitFor(async () => ['payment_submitted', 'payment_processed'].includes((await p.t.api.get(`/v0/transfers/${paying.id}`)).body.state), { what: 'payout submitted' });
  await client.workflow.getHandle(`transfer:${paying.id}`).cancel();
  await waitForTransferState(p.t.api, paying.id, 'payment_processed');
  const payout = (await p.t.api.get(`/v0/payments?transfer_id=${paying.id}&kind=payout`)).body.data[0];
  expect(payout.status).toBe('settled');
});

test('amount threshold and 24-hour velocity hold transfers for review', async () => {
  const big = await approvedCustomer(p.t.api, 'US');
  const account = await verifiedUsAccount(p.t.api, big.id);
  const create = (amount: string) => p.t.api.post('/v0/transfers', {
    ...achToWire(amount), on_behalf_of: big.id, destination: { payment_rail: 'wire', currency: 'usd', external_account_id: account.id },
  });
  const send = async (amount: string) => {
    const tr = (await create(amount)).body;
    await deposit(tr.id);
    return tr.id as string;
  };
  const large = await send('10000.00');
  const heldLarge = await waitFor(async () => (await p.t.api.get(`/v0/transfers/${large}`)).body.review_reasons && (await p.t.api.get(`/v0/transfers/${large}`)).body);
  expect(heldLarge.review_reasons).toEqual([expect.stringMatching(/^amount_threshold/)]);
  expect((await p.t.api.post(`/v0/sandbox/transfers/${large}/review`, { decision: 'approve' })).status).toBe(200);
  // 10,000 + 4 × 9,000 = 46,000 is within the 50,000 daily limit; the next 9,000 is not.
  for (let i = 0; i < 4; i++) await waitForTransferState(p.t.api, await send('9000.00'), 'payment_processed');
  const over = await send('9000.00');
  const heldVelocity = await waitFor(async () => (await p.t.api.get(`/v0/transfers/${over}`)).body.review_reasons && (await p.t.api.get(`/v0/transfers/${over}`)).body);
  expect(heldVelocity.review_reasons).toEqual([expect.stringMatching(/^velocity_limit/)]);
  // The customer's running total (what the check reads) counted it while it was funded.
  const total = async () => (await testDb().selectFrom('transfer_volumes').select((eb) => eb.fn.sum<string>('amount_minor').as('n'))
    .where('owner_type', '=', 'customer').where('owner_id', '=', big.id).executeTakeFirstOrThrow()).n;
  expect(await total()).toBe('5500000');
  // Canceled and refunded, it no longer counts; one awaiting its deposit does not count yet.
  expect((await p.t.api.delete(`/v0/transfers/${over}`)).status).toBe(200);
  await waitForTransferState(p.t.api, over, 'canceled');
  expect((await create('9000.00')).status).toBe(201);
  expect(await total()).toBe('4600000');
}, 120_000);

test('the hourly maintenance drops running totals no 24-hour limit reads any more (older than 48 hours)', async () => {
  const hour = (hoursAgo: number) => new Date(Math.floor(Date.now() / 3600_000 - hoursAgo) * 3600_000);
  const owner = `cus_reaped_${Date.now()}`;
  await testDb().insertInto('transfer_volumes').values([49, 30].map((h) => ({ owner_type: 'customer' as const, owner_id: owner, currency: 'usd', hour: hour(h), amount_minor: '100' }))).execute();
  const { createMaintenanceActivities } = await import('../../activities/maintenance');
  expect(await createMaintenanceActivities(testDb(), 24).reapOldTransferVolumes()).toBeGreaterThanOrEqual(1);
  const left = await testDb().selectFrom('transfer_volumes').select('hour').where('owner_id', '=', owner).execute();
  expect(left.map((r) => r.hour)).toEqual([hour(30)]);
});

describe('deposit expiry', () => {
  // An API process whose transfers wait 3.6 s for their deposit (TRANSFER_DEPOSIT_EXPIRY_HOURS=0.001);
  // the shared worker runs their workflows.
  let api: ChildProcess;
  let expiring: ApiClient;
  beforeAll(async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    expiring = apiClient(p.t.secret, url);
    api = startProcess('api-deposit-expiry', path.join(__dirname, '../../src/main/api.ts'), { ...stack().processEnv, PORT: String(port), TRANSFER_DEPOSIT_EXPIRY_HOURS: '0.001' }, stack().logDir);
    await waitUntilReady(`${url}/readyz`, api, 60_000);
  }, 90_000);
  afterAll(() => stopProcess(api));

  test('no deposit in time, on a rail or on a chain: canceled as deposit_expired, nothing moved, a late deposit refused', async () => {
    const create = async (body: Record<string, unknown>) => {
      const res = await expiring.post('/v0/transfers', body);
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const onRail = await create(achToWire('30.00'));
    const onChain = await create({ ...achToWire('31.00'), source: { payment_rail: 'base', currency: 'usdc', from_address: receiver } });
    for (const id of [onRail, onChain]) {
      expect((await waitForTransferState(p.t.api, id, 'canceled', 30_000)).state_reason).toBe('deposit_expired');
      expect((await p.t.api.post(`/v0/sandbox/transfers/${id}/deposit`)).status).toBe(409);
      expect((await p.t.api.get(`/v0/payments?transfer_id=${id}`)).body.data).toEqual([]);
      expect(await testDb().selectFrom('ledger_transactions').select('id').where('reference_id', '=', id).execute()).toEqual([]);
    }
  }, 60_000);
});
