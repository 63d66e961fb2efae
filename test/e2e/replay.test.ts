import { readFileSync } from 'node:fs';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

Runtime.install({ logger: new DefaultLogger('WARN') });
import { business, createTenant, documents, individual, temporalClient, testDb, waitFor, waitForKycStatus, workflowBundle, wrongMicroDepositAmounts, type Tenant } from '../harness';
import { approvedCustomer, verifiedUsAccount, waitForChainWatch, sandboxDeposit, waitForTransferState } from '../harness/transfers';

// Determinism: histories recorded by the running worker must replay against the current workflow code.
// (Histories of earlier releases: replay-releases.test.ts.)

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});

async function drive(body: Record<string, unknown>, steps: (id: string) => Promise<void>) {
  const c = (await t.api.post('/v0/customers', body)).body;
  await steps(c.id);
  const client = await temporalClient();
  await client.workflow.getHandle(`kyc:${c.id}`).result();
  return `kyc:${c.id}`;
}

test('histories of every workflow and path replay without non-determinism', async () => {
  const ids = [
    await drive(individual(), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
    }),
    await drive(individual({ email: `kyc_incomplete.replay.${Date.now()}@example.com` }), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'incomplete');
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
    }),
    await drive(individual({ email: `kyc_manual.replay.${Date.now()}@example.com` }), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'manual_review');
      await t.api.post(`/v0/sandbox/customers/${id}/kyc_decision`, { decision: 'reject', reasons: ['adverse_media'] });
    }),
    await drive(business(), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'awaiting_ubo');
      await t.api.post(`/v0/customers/${id}/kyc`, {
        beneficial_owners: [{ first_name: 'Ola', last_name: 'Nordmann', date_of_birth: '1960-01-01', ownership_percentage: 100 }],
      });
    }),
    // Deleted while KYC waits for more documents: the workflow closes.
    await drive(individual({ email: `kyc_incomplete.deleted.${Date.now()}@example.com` }), async (id) => {
      await t.api.post(`/v0/customers/${id}/kyc`, documents());
      await waitForKycStatus(t.api, id, 'incomplete');
      await t.api.delete(`/v0/customers/${id}`);
    }),
  ];

  // Micro-deposit verification (wrong, then right) and a sanctions screening batch.
  const customer = (await t.api.post('/v0/customers', individual())).body;
  const account = (await t.api.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'us_bank_account', account_name: 'Replay', routing_number: '011000015', account_number: '123456789',
  })).body;
  const verification = `external-account-verification:${account.id}`;
  const { verificationState } = await import('../../workflows/micro-deposit-messages');
  await waitFor(async () => (await (await temporalClient()).workflow.getHandle(verification).query(verificationState)).phase === 'awaiting_amounts');
  const amounts = (await t.api.get(`/v0/sandbox/external-accounts/${account.id}/micro-deposits`)).body.data.map((p: any) => p.amount);
  await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts: wrongMicroDepositAmounts(amounts) });
  await t.api.post(`/v0/external-accounts/${account.id}/verify`, { amounts });
  await (await temporalClient()).workflow.getHandle(verification).result();
  ids.push(verification);
  // One on the ACH settlement schedule too (an account number beginning with 999).
  const scheduled = (await t.api.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'us_bank_account', account_name: 'Replay', routing_number: '011000015', account_number: '999123456',
  })).body;
  await waitFor(async () => (await (await temporalClient()).workflow.getHandle(`external-account-verification:${scheduled.id}`).query(verificationState)).phase === 'awaiting_amounts');
  const scheduledAmounts = (await t.api.get(`/v0/sandbox/external-accounts/${scheduled.id}/micro-deposits`)).body.data.map((p: any) => p.amount);
  await t.api.post(`/v0/external-accounts/${scheduled.id}/verify`, { amounts: scheduledAmounts });
  await (await temporalClient()).workflow.getHandle(`external-account-verification:${scheduled.id}`).result();
  ids.push(`external-account-verification:${scheduled.id}`);
  const batch = (await t.api.post('/v0/sanctions/screen/batch', { entities: [{ name: 'Jane Doe' }, { name: 'BANCO NACIONAL DE CUBA' }] })).body;
  await (await temporalClient()).workflow.getHandle(`screening-batch:${batch.id}`).result();
  ids.push(`screening-batch:${batch.id}`);

  const client = await temporalClient();
  const histories = ids.map(async (workflowId) => ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() }));
  const results = Worker.runReplayHistories(workflowBundle(), (async function* () {
    for (const h of histories) yield await h;
  })());
  let replayed = 0;
  for await (const result of results) {
    expect(result.error).toBeUndefined();
    replayed++;
  }
  expect(replayed).toBe(8);
});

async function replay(ids: string[]) {
  const client = await temporalClient();
  const histories = await Promise.all(ids.map(async (workflowId) => ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() })));
  let replayed = 0;
  for await (const result of Worker.runReplayHistories(workflowBundle(), histories)) {
    expect(result.error).toBeUndefined();
    replayed++;
  }
  return replayed;
}

test('transfer histories of every branch replay without non-determinism', async () => {
  const customer = await approvedCustomer(t.api, 'US');
  const account = await verifiedUsAccount(t.api, customer.id);
  const create = async (amount: string, destination: Record<string, unknown>) =>
    (await t.api.post('/v0/transfers', { amount, on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' }, destination })).body.id as string;
  const toChain = { payment_rail: 'optimism', currency: 'usdc', to_address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' };
  const toBank = { payment_rail: 'ach', currency: 'usd', external_account_id: account.id };

  const processed = await create('10.00', toChain);
  const canceled = await create('11.00', toChain);
  const rejected = await create('12.15', toChain);
  const blocked = await create('13.00', { ...toChain, to_address: '0x00000000000000000000000000000000000b10c5' });
  const returned = await create('14.14', toBank);
  // Funded on chain and paid out, its deposit swept into the treasury.
  const swept = (await t.api.post('/v0/transfers', {
    amount: '17.00', on_behalf_of: customer.id, source: { payment_rail: 'base', currency: 'usdc', from_address: toChain.to_address }, destination: toBank,
  })).body.id as string;
  await t.api.delete(`/v0/transfers/${canceled}`);
  for (const id of [processed, rejected, blocked, returned, swept]) await t.api.post(`/v0/sandbox/transfers/${id}/deposit`);
  await waitFor(async () => (await t.api.get(`/v0/transfers/${rejected}`)).body.review_reasons);
  await t.api.post(`/v0/sandbox/transfers/${rejected}/review`, { decision: 'reject' });
  const ids = [processed, canceled, rejected, blocked, returned, swept];
  const client = await temporalClient();
  for (const id of ids) await client.workflow.getHandle(`transfer:${id}`).result();
  await waitForTransferState(t.api, returned, 'refunded');
  // Funded on chain, cancelled in Temporal while the chain is watched.
  const chainFunded = (await t.api.post('/v0/transfers', {
    amount: '15.00', on_behalf_of: customer.id, source: { payment_rail: 'ethereum', currency: 'usdc', from_address: toChain.to_address }, destination: toBank,
  })).body.id as string;
  await waitForChainWatch(chainFunded);
  await client.workflow.getHandle(`transfer:${chainFunded}`).cancel();
  await client.workflow.getHandle(`transfer:${chainFunded}`).result();
  ids.push(chainFunded);
  // Returned, then its refund rejected by the source bank (.17) or returned by it after it settled
  // (.18); retried by an operator, refunded.
  for (const [amount, shown] of [['16.17', 'refund rejected'], ['18.18', 'refund returned']]) {
    const id = await create(amount, toBank);
    await t.api.post(`/v0/sandbox/transfers/${id}/deposit`);
    await waitForTransferState(t.api, id, 'payment_processed');
    await t.api.post(`/v0/sandbox/transfers/${id}/return`, { code: 'R01' });
    await waitFor(async () => (await t.api.get(`/v0/transfers/${id}`)).body.state_reason?.startsWith(shown), { what: shown });
    expect((await t.api.post(`/v0/sandbox/transfers/${id}/retry_refund`)).status).toBe(200);
    await client.workflow.getHandle(`transfer:${id}`).result();
    ids.push(id);
  }
  expect(await replay(ids.map((id) => `transfer:${id}`))).toBe(9);

  // Deposits that are not what a transfer quoted go back to the sender: one settles, the sender's bank
  // rejects the other (.19), which is held.
  const strays = await create('19.00', toBank);
  for (const amount of ['18.99', '19.19']) await sandboxDeposit(t.api, strays, { amount });
  const inbound = await testDb().selectFrom('rail_events').select('provider_payment_id').where('transfer_id', '=', strays).execute();
  const returns = inbound.map((e) => `rail-deposit-return:${strays}:${e.provider_payment_id}`);
  expect((await Promise.all(returns.map((id) => client.workflow.getHandle(id).result()))).map((r: any) => r.returned).sort()).toEqual([false, true]);
  await t.api.delete(`/v0/transfers/${strays}`);
  expect(await replay(returns)).toBe(2);
}, 180_000);

// Every workflow run evaluates the bundle's modules afresh, so a library pulled in by an innocent
// import (a validation helper importing zod and phone metadata) costs CPU on every transfer.
test('the workflow bundle holds the SDK and our workflow code only', () => {
  // The bundle the test stack's workers run, built by `npm run build:workflows`'s code.
  const code = readFileSync(workflowBundle().workflowBundle.codePath, 'utf8');
  const modules = [...code.matchAll(/\/\*\*\*\/ "(\.\/[^"]+)"/g)].map((m) => m[1]!);
  expect(modules.length).toBeGreaterThan(10);
  const allowed = [/^\.\/node_modules\/(@temporalio|nexus-rpc|ms|long|@protobufjs|protobufjs)\//, /^\.\/workflows\//, /^\.\/src\/(temporal\/(search-attributes|task-queues|failures)|domain\/(kyc|regions))\.ts$/];
  expect(modules.filter((m) => !allowed.some((re) => re.test(m)))).toEqual([]);
});

test('a webhook endpoint history (deliveries, then the endpoint deleted) replays without non-determinism', async () => {
  const { webhookReceiver } = await import('../harness/webhook-receiver');
  const r = await webhookReceiver();
  try {
    const endpoint = (await t.api.post('/v0/webhooks', { url: r.url, enabled_events: ['customer.created'] })).body;
    const c = (await t.api.post('/v0/customers', individual())).body;
    await waitFor(async () => r.received.some((x) => x.body.data.id === c.id));
    await t.api.delete(`/v0/webhooks/${endpoint.id}`);
    await (await temporalClient()).workflow.getHandle(`webhook-endpoint:${endpoint.id}`).result();
    expect(await replay([`webhook-endpoint:${endpoint.id}`])).toBe(1);
  } finally {
    await r.close();
  }
});

test('a wallet watcher history (several watch periods, deposits recorded) replays without non-determinism', async () => {
  const customer = await approvedCustomer(t.api);
  const w = (await t.api.post('/v0/wallets', { customer_id: customer.id, type: 'custodial', chains: ['optimism'] })).body;
  await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'optimism', currency: 'usdc', amount: '1' });
  await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data[0]?.state === 'confirmed');
  const handle = (await temporalClient()).workflow.getHandle('wallet-watcher:optimism');
  // Two periods (WALLET_WATCH_PERIOD_MS is 5 s in tests) have ended: activities completed, the loop went on.
  await waitFor(async () => (await handle.fetchHistory()).events!.filter((e) => e.activityTaskCompletedEventAttributes).length >= 2,
    { timeoutMs: 30_000, what: 'two watch periods to end' });
  expect(await replay(['wallet-watcher:optimism'])).toBe(1);
});
