import { randomUUID } from 'node:crypto';
import { apiClient, createTenant, stack, testDb, waitFor } from '../harness';
import { approvedCustomer, freshReceiver, RECEIVER, tokenBalance, transferTestParties, waitForTransferState } from '../harness/transfers';
import { signSandboxWebhook } from '../../src/providers/rails';

// Virtual accounts: a customer's permanent bank deposit details; each payment the rail's provider
// reports there (here the sandbox's, through the rail-event intake) becomes one transfer to the
// account's destination, carried by the transfer workflow as any other (payout on the real base
// node or over ACH, returns, refunds). The ledger balances after every test (transferTestParties).

const { parties: p } = transferTestParties();
const api = () => p.t.api;
const base = () => `/v0/customers/${p.us.id}/virtual_accounts`;
const historyOf = async (va: { id: string }) => (await api().get(`/v0/virtual_accounts/${va.id}/history`)).body.data as any[];
const pay = (va: { id: string }, amount: string, extra: Record<string, unknown> = {}) => api().post(`/v0/sandbox/virtual_accounts/${va.id}/deposit`, { amount, ...extra });

const payments = (transferId: string, kind: 'deposit' | 'payout' | 'refund') => testDb().selectFrom('payments').select(['status', 'amount_minor'])
  .where('transfer_id', '=', transferId).where('kind', '=', kind).execute();

test('a usd virtual account over ach: each payment to it becomes one transfer, paid out once on base, with the fee; the history shows them', async () => {
  const receiver = freshReceiver();
  const created = await api().post(base(), {
    source: { currency: 'usd' }, developer_fee_percent: '1', destination: { payment_rail: 'base', currency: 'usdc', to_address: receiver },
  });
  expect(created.status).toBe(201);
  const va = created.body;
  expect(va).toMatchObject({
    object: 'virtual_account', status: 'active', customer_id: p.us.id, source: { currency: 'usd', payment_rail: 'ach' }, developer_fee_percent: '1',
    source_deposit_instructions: { bank_routing_number: '026009593', bank_account_number: expect.stringMatching(/^8\d{11}$/) },
  });
  expect((await api().get(`${base()}/${va.id}`)).body).toEqual(va);

  const deposits = [];
  for (const amount of ['40.00', '25.00']) {
    const res = await pay(va, amount);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'virtual_account_deposit', virtual_account_id: va.id, payment_rail: 'ach', amount, state: 'transferred' });
    deposits.push(res.body);
  }
  const done = await Promise.all(deposits.map((d) => waitForTransferState(api(), d.transfer_id, 'payment_processed', 180_000)));
  expect(done[0]).toMatchObject({
    route_id: va.id, amount: '40.00', developer_fee: '0.40', source: { payment_rail: 'ach', currency: 'usd' },
    source_deposit_instructions: { bank_account_number: va.source_deposit_instructions.bank_account_number },
  });
  for (const t of done) {
    expect(await payments(t.id, 'deposit')).toHaveLength(1);
    expect(await payments(t.id, 'payout')).toEqual([expect.objectContaining({ status: 'settled' })]);
  }
  const paidOut = done.reduce((sum, t) => sum + BigInt(Math.round(Number(t.receipt.final_amount) * 1e6)), 0n);
  expect(await tokenBalance('base', 'usdc', receiver)).toBe(paidOut);

  const history = await historyOf(va);
  expect(history.map((h) => [h.amount, h.state, h.transfer_state])).toEqual([['25.00', 'transferred', 'payment_processed'], ['40.00', 'transferred', 'payment_processed']]);
  const listed = (await api().get(`/v0/transfers?route_id=${va.id}`)).body.data as any[];
  expect(new Set(listed.map((t) => t.id))).toEqual(new Set(done.map((t) => t.id)));
  expect((await api().get('/v0/balance')).body.developer_fees).toEqual(expect.arrayContaining([{ currency: 'usd', amount: expect.any(String) }]));

  // A payment in another currency is not the account's: held for operators, no transfer.
  const eur = await pay(va, '10.00', { currency: 'eur', payment_rail: 'sepa' });
  expect(eur.body).toMatchObject({ state: 'held', transfer_id: null, reason: expect.stringMatching(/^currency_not_routed/) });
  const events = (await api().get(`/v0/events?type=virtual_account.deposit.created&limit=10`)).body.data as any[];
  expect(events.filter((e) => e.data.virtual_account_id === va.id)).toHaveLength(3);
}, 300_000);

test('a virtual account paying out over ach: a returned payout is refunded; once deactivated, the next payment goes back to its sender', async () => {
  const va = (await api().post(base(), {
    source: { currency: 'usd', payment_rail: 'ach' }, destination: { payment_rail: 'ach', currency: 'usd', external_account_id: p.usAccount.id },
  })).body;
  const first = (await pay(va, '30.00')).body;
  await waitForTransferState(api(), first.transfer_id, 'payment_processed', 120_000);
  expect((await api().post(`/v0/sandbox/transfers/${first.transfer_id}/return`, { code: 'R01' })).status).toBe(200);
  const refunded = await waitForTransferState(api(), first.transfer_id, 'refunded', 120_000);
  expect(refunded).toMatchObject({ route_id: va.id, return_code: 'R01' });
  expect(await payments(first.transfer_id, 'refund')).toEqual([expect.objectContaining({ status: 'settled', amount_minor: '3000' })]);

  const deactivated = await api().post(`${base()}/${va.id}/deactivate`, {});
  expect(deactivated.body.status).toBe('deactivated');
  expect((await api().post(`${base()}/${va.id}/deactivate`, {})).status).toBe(409);
  const second = (await pay(va, '20.00')).body;
  expect(second).toMatchObject({ state: 'transferred', reason: expect.stringMatching(/^route_deactivated/) });
  const canceled = await waitForTransferState(api(), second.transfer_id, 'canceled', 120_000);
  expect(canceled.state_reason).toMatch(/route_deactivated/);
  expect(await payments(second.transfer_id, 'payout')).toEqual([]);
  expect(await payments(second.transfer_id, 'refund')).toEqual([expect.objectContaining({ status: 'settled', amount_minor: '2000' })]);
  expect((await historyOf(va)).map((h) => h.transfer_state)).toEqual(['canceled', 'refunded']);
}, 300_000);

test("a route's limits hold a deposit above them in review, for an operator's decision; a change of limits keeps what it does not name", async () => {
  const va = (await api().post(base(), {
    source: { currency: 'usd' }, limits: { per_deposit: '50.00', per_day: '120.00' },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
  })).body;
  expect(va.limits).toEqual({ per_deposit: '50.00', per_day: '120.00' });
  const heldReasons = async (transferId: string) => waitFor(async () => (await api().get(`/v0/transfers/${transferId}`)).body.review_reasons, { what: 'hold' });

  const under = (await pay(va, '45.00')).body;
  await waitForTransferState(api(), under.transfer_id, 'payment_processed', 180_000);
  const over = (await pay(va, '60.00')).body;
  expect(await heldReasons(over.transfer_id)).toEqual([expect.stringMatching(/^route_limit: the deposit is above the route's limit of 50.00 usd per deposit/)]);
  // 45 + 60 + 40: above the 120 of one day.
  const daily = (await pay(va, '40.00')).body;
  expect(await heldReasons(daily.transfer_id)).toEqual([expect.stringMatching(/^route_limit: the route's deposits of 24 hours are above its limit of 120.00 usd per day/)]);
  for (const held of [over, daily]) expect((await api().post(`/v0/sandbox/transfers/${held.transfer_id}/review`, { decision: 'approve' })).status).toBe(200);
  await Promise.all([over, daily].map((d) => waitForTransferState(api(), d.transfer_id, 'payment_processed', 180_000)));

  const changed = await api().patch(`${base()}/${va.id}`, { limits: { per_day: null } });
  expect(changed.body.limits).toEqual({ per_deposit: '50.00', per_day: null });
  expect((await api().patch(`${base()}/${va.id}`, { limits: { per_deposit: '0.001' } })).status).toBe(400);
}, 300_000);

test('where a rail has no account numbers of their own (gbp over faster_payments), a virtual account is a static deposit reference on the collection account', async () => {
  const gb = await approvedCustomer(api(), 'GB');
  const created = await api().post(`/v0/customers/${gb.id}/virtual_accounts`, {
    source: { currency: 'gbp' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
  });
  expect(created.status).toBe(201);
  const va = created.body;
  expect(va.source).toEqual({ currency: 'gbp', payment_rail: 'faster_payments' });
  expect(va.source_deposit_instructions).toMatchObject({ sort_code: '040004', account_number: '12345678', deposit_reference: expect.stringMatching(/^VA[0-9A-Z]{14}$/) });
  const deposit = (await pay(va, '12.00')).body;
  const done = await waitForTransferState(api(), deposit.transfer_id, 'payment_processed', 120_000);
  expect(done).toMatchObject({ route_id: va.id, source: { payment_rail: 'faster_payments', currency: 'gbp' } });
  expect(done.source_deposit_instructions.deposit_reference).toBe(va.source_deposit_instructions.deposit_reference);
}, 180_000);

test("another tenant's virtual accounts are 404s; a payment naming a sandbox account from the provider's live webhook is never credited to it", async () => {
  const de = await approvedCustomer(api(), 'DE');
  const deBase = `/v0/customers/${de.id}/virtual_accounts`;
  const created = await api().post(deBase, { source: { currency: 'eur' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } });
  expect(created.status).toBe(201);
  const va = created.body;
  expect(va.source_deposit_instructions).toMatchObject({ iban: expect.stringMatching(/^DE\d{20}$/), bic: expect.any(String) });
  // Under another customer of the same tenant it is not found either.
  expect((await api().get(`${base()}/${va.id}`)).status).toBe(404);
  const other = await createTenant();
  for (const res of [
    await other.api.get(`${deBase}/${va.id}`),
    await other.api.get(`/v0/virtual_accounts/${va.id}/history`),
    await other.api.patch(`${deBase}/${va.id}`, { developer_fee_percent: '2' }),
    await other.api.post(`${deBase}/${va.id}/deactivate`, {}),
    await other.api.post(`/v0/sandbox/virtual_accounts/${va.id}/deposit`, { amount: '5.00' }),
  ]) expect(res.status).toBe(404);
  expect((await other.api.get(`/v0/transfers?route_id=${va.id}`)).body.data).toEqual([]);

  const event = {
    id: `evt_${randomUUID()}`, type: 'payment.received',
    data: { payment_id: `prov_${randomUUID()}`, rail: 'sepa', currency: 'eur', amount: '15.00', reference: va.source_deposit_instructions.iban },
  };
  const rawBody = JSON.stringify(event);
  const signature = signSandboxWebhook(stack().processEnv.RAIL_WEBHOOK_SECRET!, rawBody);
  const res = await apiClient().request('POST', '/provider-webhooks/rails', { rawBody, headers: { 'Content-Type': 'application/json', 'Rail-Signature': signature } });
  expect(res.status).toBe(200);
  expect(res.body.received).toEqual([{ id: event.id, outcome: 'unmatched' }]);
  expect(await historyOf(va)).toEqual([]);
}, 120_000);

test('a virtual account its deposits could not pass is refused, and changes nothing; a change is checked the same way', async () => {
  const count = async () => (await testDb().selectFrom('payment_routes').select(({ fn }) => fn.countAll<string>().as('n'))
    .where('developer_id', '=', p.t.developerId).executeTakeFirstOrThrow()).n;
  const before = await count();
  const bad = [
    { source: { currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc' } },
    { source: { currency: 'jpy' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } },
    { source: { currency: 'usd', payment_rail: 'sepa' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } },
    { source: { currency: 'usd' }, destination: { payment_rail: 'wire', currency: 'usd', external_account_id: 'ext_nope' } },
    { source: { currency: 'usd' }, developer_fee_percent: '100', destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } },
    { source: { currency: 'usd' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER }, extra: true },
  ];
  for (const body of bad) {
    const res = await api().post(base(), body);
    expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
  }
  expect((await api().post('/v0/customers/cus_nope/virtual_accounts', bad[0])).status).toBe(404);
  expect(await count()).toBe(before);

  // A US customer is not endorsed for SPEI; a Mexican one is.
  const mxn = { source: { currency: 'mxn' }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } };
  expect((await api().post(base(), mxn)).status).toBe(409);
  const mx = await approvedCustomer(api(), 'MX');
  const mxBase = `/v0/customers/${mx.id}/virtual_accounts`;
  const va = (await api().post(mxBase, mxn)).body;
  expect(va.source_deposit_instructions.clabe).toMatch(/^\d{18}$/);
  const change = await api().patch(`${mxBase}/${va.id}`, { destination: { payment_rail: 'base', currency: 'usdc', external_account_id: 'ext_nope' } });
  expect(change.status).toBe(400);
  expect((await api().get(`${mxBase}/${va.id}`)).body.destination).toEqual({ payment_rail: 'base', currency: 'usdc', to_address: RECEIVER });
  expect((await api().post(`/v0/sandbox/virtual_accounts/${va.id}/deposit`, { amount: '-1' })).status).toBe(400);
}, 120_000);
