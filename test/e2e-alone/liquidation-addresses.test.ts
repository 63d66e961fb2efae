import { address, generateKeyPairSigner } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { apiClient, createTenant, stack, temporalClient, testDb, waitFor } from '../harness';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import { expectChainHistoriesReplay, expectLedgerBalanced, fundedCustomerWallet, RECEIVER, tokenBalance, transferTestParties } from '../harness/transfers';

// Liquidation addresses on the real base node: each deposit becomes one transfer and one payout,
// also the one that arrives while the worker carrying it is SIGKILLed. Alone: the base watcher (one
// for the whole stack) moves to this file's own worker for its tests, and back after them.

const { parties: p } = transferTestParties();
const own = apiAndWorkerOfTheirOwn('routes');
let api: ReturnType<typeof apiClient>;

/** The chain's one watcher, stopped and started again on `taskQueue`. */
async function moveBaseWatcher(taskQueue: string) {
  const client = await temporalClient();
  const handle = client.workflow.getHandle('wallet-watcher:base');
  await handle.terminate('moved to another task queue by the test').catch(() => undefined);
  await client.workflow.start('walletWatcherWorkflow', {
    workflowId: 'wallet-watcher:base', taskQueue, args: [{ chain: 'base', periodMs: Number(stack().processEnv.WALLET_WATCH_PERIOD_MS) }],
  });
}

beforeAll(async () => {
  await own.startFirstWorker();
  await moveBaseWatcher(own.taskQueue);
  api = apiClient(p.t.secret, own.url());
}, 180_000);

afterAll(async () => {
  await moveBaseWatcher(stack().taskQueue);
});

const drainsOf = async (liq: { id: string }) => (await api.get(`/v0/customers/${p.us.id}/liquidation_addresses/${liq.id}/drains`)).body.data as any[];

test('three deposits on a base liquidation address, one while the worker is SIGKILLed: three transfers, three payouts, each once; the drains show them', async () => {
  const created = await api.post(`/v0/customers/${p.us.id}/liquidation_addresses`, {
    chain: 'base', currency: 'usdc', developer_fee_percent: '1.5', destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER },
  });
  expect(created.status).toBe(201);
  const liq = created.body;
  expect(liq).toMatchObject({ object: 'liquidation_address', chain: 'base', currency: 'usdc', status: 'active', developer_fee_percent: '1.5' });
  expect(liq.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  const sender = await fundedCustomerWallet('base', 'usdc', 100_000_000n, 8);

  await sender.send(liq.address, 10_000_000n);
  await waitFor(async () => (await drainsOf(liq)).find((d) => d.transfer_state === 'payment_processed'), { timeoutMs: 90_000, what: 'the first drain processed' });

  // The second deposit: the worker dies once the watcher has seen it, before or while it is carried.
  await sender.send(liq.address, 12_000_000n);
  await waitFor(async () => (await drainsOf(liq)).length === 2, { timeoutMs: 60_000, intervalMs: 50, what: 'the second deposit seen' });
  own.killWorker();
  await new Promise((r) => setTimeout(r, 500));
  own.startWorker();
  await sender.send(liq.address, 5_000_000n);

  const drains = await waitFor(async () => {
    const all = await drainsOf(liq);
    return all.length === 3 && all.every((d) => d.transfer_state === 'payment_processed') && all;
  }, { timeoutMs: 240_000, intervalMs: 1_000, what: 'three drains processed' });
  expect(drains.map((d) => d.amount).sort()).toEqual(['10.000000', '12.000000', '5.000000']);
  expect(drains.every((d) => d.state === 'transferred' && d.from_address.toLowerCase() === sender.address.toLowerCase())).toBe(true);

  // One transfer per deposit, each with the route's id, the fee and one payout.
  const transfers = (await api.get(`/v0/transfers?route_id=${liq.id}&limit=10`)).body.data as any[];
  expect(transfers).toHaveLength(3);
  expect(new Set(transfers.map((t) => t.id))).toEqual(new Set(drains.map((d) => d.transfer_id)));
  const twelve = transfers.find((t) => t.amount === '12.000000')!;
  expect(twelve).toMatchObject({ route_id: liq.id, developer_fee: '0.180000', source: { payment_rail: 'base', from_address: sender.address } });
  const payouts = await testDb().selectFrom('payments').select(['transfer_id', 'status']).where('transfer_id', 'in', transfers.map((t) => t.id)).where('kind', '=', 'payout').execute();
  expect(payouts).toHaveLength(3);
  expect(payouts.every((x) => x.status === 'settled')).toBe(true);
  const count = await testDb().selectFrom('route_deposits').select(({ fn }) => fn.countAll<string>().as('n')).where('route_id', '=', liq.id).executeTakeFirstOrThrow();
  expect(Number(count.n)).toBe(3);
  // The three sweeps from the one address ran one after the other: it holds nothing.
  await waitFor(async () => (await tokenBalance('base', 'usdc', liq.address)) === 0n, { timeoutMs: 90_000, what: 'the address swept' });
  expect((await api.get('/v0/balance')).body.developer_fees).toEqual(expect.arrayContaining([{ currency: 'usdc', amount: expect.any(String) }]));
  await expectLedgerBalanced();
  await expectChainHistoriesReplay('base', transfers.map((t) => t.id));

  // Another tenant sees none of it.
  const other = await createTenant();
  expect((await other.api.get(`/v0/customers/${p.us.id}/liquidation_addresses/${liq.id}`)).status).toBe(404);
  expect((await other.api.get(`/v0/customers/${p.us.id}/liquidation_addresses/${liq.id}/drains`)).status).toBe(404);
  expect((await other.api.get(`/v0/transfers?route_id=${liq.id}`)).body.data).toEqual([]);

  // Deactivated: the next deposit is held for operators, and no transfer is made of it.
  expect((await api.post(`/v0/customers/${p.us.id}/liquidation_addresses/${liq.id}/deactivate`, {})).body.status).toBe('deactivated');
  await sender.send(liq.address, 3_000_000n);
  const held = await waitFor(async () => (await drainsOf(liq)).find((d) => d.state === 'held'), { timeoutMs: 90_000, what: 'the fourth deposit held' });
  expect(held).toMatchObject({ amount: '3.000000', transfer_id: null });
  expect(held.reason).toMatch(/route_deactivated/);
  expect((await api.get(`/v0/transfers?route_id=${liq.id}`)).body.data).toHaveLength(3);

  // With a return address, a deactivated address sends the next deposit back there: its transfer
  // takes it and refunds it, with no payout.
  const returnTo = '0x000000000000000000000000000000000000bEEF';
  expect((await api.patch(`/v0/customers/${p.us.id}/liquidation_addresses/${liq.id}`, { return_address: returnTo })).status).toBe(200);
  const returnedBefore = await tokenBalance('base', 'usdc', returnTo);
  await sender.send(liq.address, 4_000_000n);
  const sentBack = await waitFor(async () => (await drainsOf(liq)).find((d) => d.amount === '4.000000' && d.transfer_state === 'canceled'), {
    timeoutMs: 180_000, intervalMs: 1_000, what: 'the fifth deposit sent back',
  });
  expect(sentBack).toMatchObject({ state: 'transferred', reason: expect.stringMatching(/^route_deactivated: .*return address/) });
  const back = (await api.get(`/v0/transfers/${sentBack.transfer_id}`)).body;
  expect(back.source.from_address.toLowerCase()).toBe(returnTo.toLowerCase());
  const refunds = await testDb().selectFrom('payments').select(['kind', 'status', 'amount_minor']).where('transfer_id', '=', back.id).where('kind', 'in', ['payout', 'refund']).execute();
  expect(refunds).toEqual([expect.objectContaining({ kind: 'refund', status: 'settled' })]);
  expect(await tokenBalance('base', 'usdc', returnTo) - returnedBefore).toBe(BigInt(refunds[0]!.amount_minor));
}, 900_000);

test('a liquidation address is refused when its route could not carry a deposit, and changes nothing', async () => {
  const [offCurve] = await findAssociatedTokenPda({ owner: (await generateKeyPairSigner()).address, mint: address('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'), tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const before = await testDb().selectFrom('payment_routes').select(({ fn }) => fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const bad = [
    { chain: 'base', currency: 'usdc', destination: { payment_rail: 'ethereum', currency: 'usdc' } },
    { chain: 'base', currency: 'eur', destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER } },
    { chain: 'base', currency: 'usdc', destination: { payment_rail: 'wire', currency: 'usd', external_account_id: 'ext_nope' } },
    { chain: 'base', currency: 'usdc', developer_fee_percent: '100', destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER } },
    { chain: 'base', currency: 'usdc', return_address: 'not-an-address', destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER } },
    // Refund addresses that burn money, and Solana addresses no key holds (a program-derived address).
    { chain: 'base', currency: 'usdc', return_address: '0x000000000000000000000000000000000000dEaD', destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER } },
    { chain: 'base', currency: 'usdc', return_address: '0x0000000000000000000000000000000000000000', destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER } },
    { chain: 'solana', currency: 'usdc', return_address: offCurve, destination: { payment_rail: 'ethereum', currency: 'usdc', to_address: RECEIVER } },
    { chain: 'base', currency: 'usdc', destination: { payment_rail: 'solana', currency: 'usdc', to_address: offCurve } },
  ];
  for (const body of bad) {
    const res = await api.post(`/v0/customers/${p.us.id}/liquidation_addresses`, body);
    expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_request']);
  }
  expect((await api.post('/v0/customers/cus_nope/liquidation_addresses', bad[0])).status).toBe(404);
  const after = await testDb().selectFrom('payment_routes').select(({ fn }) => fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  expect(after.n).toBe(before.n);
}, 60_000);
