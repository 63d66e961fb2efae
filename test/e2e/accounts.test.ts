import { sql } from 'kysely';
import { apiClient, createTenant, testDb, waitFor } from '../harness';
import {
  approvedCustomer, RECEIVER, sandboxDeposit, transferTestParties, verifiedUsAccount, waitForTransferState,
} from '../harness/transfers';

// Platform accounts: a customer's fiat balance in the ledger, funded by a deposit credited to it,
// spent by transfers that reserve their amount at creation. (HTTP → API → PostgreSQL → Temporal.)

const { parties: p } = transferTestParties();

/** The customer's transfers: other files running beside this one create transfers of their own meanwhile. */
const transferCount = async (customerId: string) =>
  Number((await sql<{ n: string }>`select count(*)::text as n from transfers where customer_id = ${customerId}`.execute(testDb())).rows[0]!.n);

/** A customer of its own (one account per customer and currency) with a usd account funded by an ACH deposit credited to it. */
async function fundedAccount(amount: string) {
  const customerId = (await approvedCustomer(p.t.api)).id;
  const account = (await p.t.api.post('/v0/accounts', { customer_id: customerId, currency: 'usd' })).body;
  const tr = (await p.t.api.post('/v0/transfers', {
    amount, on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'ach', currency: 'usd', account_id: account.id },
  })).body;
  await sandboxDeposit(p.t.api, tr.id);
  await waitForTransferState(p.t.api, tr.id, 'payment_processed', 60_000);
  return { account, customerId };
}

test('opened once per customer and currency; an ACH deposit is credited to it; its ledger movements are its transactions', async () => {
  const customer = await approvedCustomer(p.t.api);
  const res = await p.t.api.post('/v0/accounts', { customer_id: customer.id, currency: 'USD' });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ object: 'account', customer_id: customer.id, currency: 'usd', available: '0.00', pending: '0.00', status: 'active' });
  expect(res.body.id).toMatch(/^acct_/);
  const again = await p.t.api.post('/v0/accounts', { customer_id: customer.id, currency: 'usd' });
  expect(again.status).toBe(409);
  expect(again.body.error.message).toMatch(/one per customer and currency/);
  expect((await p.t.api.get(`/v0/events?object_id=${res.body.id}`)).body.data.map((e: any) => e.event)).toEqual(['account.created']);

  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '100.00', on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'ach', currency: 'usd', account_id: res.body.id },
  })).body;
  expect(tr.destination).toEqual({ payment_rail: 'ach', currency: 'usd', account_id: res.body.id });
  await sandboxDeposit(p.t.api, tr.id);
  const done = await waitForTransferState(p.t.api, tr.id, 'payment_processed', 60_000);
  const account = (await p.t.api.get(`/v0/accounts/${res.body.id}`)).body;
  expect(account).toMatchObject({ available: done.receipt.final_amount, pending: '0.00' });
  const movements = (await p.t.api.get(`/v0/accounts/${res.body.id}/transactions`)).body;
  expect(movements.data).toEqual([expect.objectContaining({
    object: 'account_transaction', account_id: res.body.id, amount: done.receipt.final_amount, balance: 'available', transfer_id: tr.id,
  })]);
  expect(movements.data[0].id).toMatch(/^ltx_/);
  // Credited in the ledger: no rail payment, no return window.
  expect((await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=payout`)).body.data[0]).toMatchObject({ status: 'settled' });
  expect((await p.t.api.get(`/v0/accounts?customer_id=${customer.id}`)).body.data.map((a: any) => a.id)).toEqual([res.body.id]);
});

test('a transfer from the account reserves its amount at creation (pending), then spends it; more than available is a 409 that changes nothing', async () => {
  const { account, customerId } = await fundedAccount('100.00');
  const available = Number((await p.t.api.get(`/v0/accounts/${account.id}`)).body.available);
  const before = await transferCount(customerId);
  const tooMuch = await p.t.api.post('/v0/transfers', {
    amount: `${available + 1}.00`, on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd', account_id: account.id },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
  });
  expect(tooMuch.status).toBe(409);
  expect(tooMuch.body.error).toMatchObject({ code: 'invalid_state', source: { location: 'body', key: 'source.account_id' } });
  expect(tooMuch.body.error.message).toMatch(new RegExp(`has ${available.toFixed(2)} usd available; the transfer needs`));
  expect(await transferCount(customerId)).toBe(before);

  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '30.00', developer_fee: '1.50', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd', account_id: account.id },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
  })).body;
  expect(tr.source).toEqual({ payment_rail: 'ach', currency: 'usd', account_id: account.id });
  expect(tr.source_deposit_instructions).toMatchObject({ account_id: account.id, amount: '30.00' });
  const reserved = (await p.t.api.get(`/v0/accounts/${account.id}`)).body;
  if (reserved.available === (available - 30).toFixed(2)) expect(['30.00', '0.00']).toContain(reserved.pending);
  await waitForTransferState(p.t.api, tr.id, 'payment_processed', 60_000);
  expect((await p.t.api.get(`/v0/accounts/${account.id}`)).body).toMatchObject({ available: (available - 30).toFixed(2), pending: '0.00' });
  const movements = (await p.t.api.get(`/v0/accounts/${account.id}/transactions?limit=100`)).body.data.filter((m: any) => m.transfer_id === tr.id);
  expect(movements.map((m: any) => [m.balance, m.amount]).sort()).toEqual([['available', '-30.00'], ['reserved', '-30.00'], ['reserved', '30.00']]);
  // The developer's fee is its own balance.
  const balance = (await p.t.api.get('/v0/balance')).body;
  expect(balance.object).toBe('balance');
  expect(Number(balance.developer_fees.find((b: any) => b.currency === 'usd').amount)).toBeGreaterThanOrEqual(1.5);
});

test('an undeliverable payout from the account is refunded to it: spendable again', async () => {
  const { account, customerId } = await fundedAccount('50.00');
  const available = (await p.t.api.get(`/v0/accounts/${account.id}`)).body.available;
  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '20.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd', account_id: account.id },
    destination: { payment_rail: 'polygon', currency: 'usdt', to_address: '0x00000000000000000000000000000000000b10c5' },
  })).body;
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded', 60_000);
  expect(refunded.state_reason).toMatch(/blocks the destination address/);
  expect((await p.t.api.get(`/v0/accounts/${account.id}`)).body).toMatchObject({ available, pending: '0.00' });
});

test('bad account references are refused, naming the field, and create nothing', async () => {
  const { account, customerId } = await fundedAccount('10.00');
  const eur = (await p.t.api.post('/v0/accounts', { customer_id: customerId, currency: 'eur' })).body;
  const other = await createTenant();
  const foreign = (await other.api.post('/v0/accounts', { customer_id: (await approvedCustomer(other.api)).id, currency: 'usd' })).body;
  const before = await transferCount(customerId);
  const base = { amount: '5.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd', account_id: account.id }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER } };
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ source: { payment_rail: 'ach', currency: 'usd', account_id: foreign.id } }, 'source.account_id', /No such account/],
    [{ source: { payment_rail: 'ach', currency: 'usd', account_id: eur.id } }, 'source.account_id', /holds eur, not usd/],
    [{ source: { payment_rail: 'base', currency: 'usdc', account_id: account.id } }, 'source.account_id', /only for fiat sources/],
    [{ destination: { payment_rail: 'ach', currency: 'usd', account_id: account.id, external_account_id: p.usAccount.id } }, 'destination.account_id', /alone/],
  ];
  for (const [patch, key, message] of cases) {
    const res = await p.t.api.post('/v0/transfers', { ...base, ...patch });
    expect([key, res.status]).toEqual([key, 400]);
    expect(res.body.error.source).toEqual({ location: 'body', key });
    expect(res.body.error.message).toMatch(message);
  }
  expect((await p.t.api.post('/v0/accounts', { customer_id: customerId, currency: 'usdc' })).body.error.source).toEqual({ location: 'body', key: 'currency' });
  expect(await transferCount(customerId)).toBe(before);
  expect((await other.api.get(`/v0/accounts/${account.id}`)).status).toBe(404);
  expect((await other.api.get(`/v0/accounts/${account.id}/transactions`)).status).toBe(404);
  expect((await apiClient(p.t.publishable).post('/v0/accounts', { customer_id: customerId, currency: 'gbp' })).status).toBe(403);
  expect((await apiClient(p.t.publishable).get(`/v0/accounts/${account.id}`)).status).toBe(403);
});

test('a transfer from the account held in review and rejected: the funds go back to the account', async () => {
  // 12,000 USD: above the review threshold (10,000), so both the funding deposit and the spend are held.
  const customerId = (await approvedCustomer(p.t.api)).id;
  const account = (await p.t.api.post('/v0/accounts', { customer_id: customerId, currency: 'usd' })).body;
  const funding = (await p.t.api.post('/v0/transfers', {
    amount: '12000.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'ach', currency: 'usd', account_id: account.id },
  })).body;
  await sandboxDeposit(p.t.api, funding.id);
  await waitForTransferState(p.t.api, funding.id, 'in_review', 60_000);
  await waitFor(async () => (await p.t.api.get(`/v0/transfers/${funding.id}`)).body.state_reason?.startsWith('on_hold'));
  expect((await p.t.api.get(`/v0/accounts/${account.id}`)).body).toMatchObject({ available: '0.00', pending: '12000.00' });
  expect((await p.t.api.post(`/v0/sandbox/transfers/${funding.id}/review`, { decision: 'approve' })).status).toBe(200);
  await waitForTransferState(p.t.api, funding.id, 'payment_processed', 60_000);
  const funded = (await p.t.api.get(`/v0/accounts/${account.id}`)).body;
  expect(funded.pending).toBe('0.00');

  const spend = (await p.t.api.post('/v0/transfers', {
    amount: '11000.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd', account_id: account.id },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: (await verifiedUsAccount(p.t.api, customerId)).id },
  })).body;
  await waitFor(async () => (await p.t.api.get(`/v0/transfers/${spend.id}`)).body.state_reason?.startsWith('on_hold'));
  expect((await p.t.api.post(`/v0/sandbox/transfers/${spend.id}/review`, { decision: 'reject', note: 'not this time' })).status).toBe(200);
  const back = await waitForTransferState(p.t.api, spend.id, 'canceled', 60_000);
  expect(back.state_reason).toMatch(/rejected_in_review/);
  expect((await p.t.api.get(`/v0/accounts/${account.id}`)).body).toMatchObject({ available: funded.available, pending: '0.00' });
  const refund = (await p.t.api.get(`/v0/payments?transfer_id=${spend.id}&kind=refund`)).body.data[0];
  expect(refund).toMatchObject({ status: 'settled' });
}, 150_000);
