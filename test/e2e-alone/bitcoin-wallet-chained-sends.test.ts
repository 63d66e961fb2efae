import { createTenant, stack, testDb, waitFor, type Tenant } from '../harness';
import { bitcoinRpc, mineBlocks, outsideAddress, whileMining } from '../harness/bitcoin';
import { expectAllProcessed, fundedWallet, thirtyFromWallet } from '../harness/concurrent';
import { approvedCustomer, expectLedgerBalanced } from '../harness/transfers';

// A bitcoin wallet funded by one coin pays many payments in one block: each send spends the
// unconfirmed change of the one before (docs/WALLETS.md). Alone, because it decides when blocks come.

let t: Tenant;
let us: { id: string };

beforeAll(async () => {
  t = await createTenant({ rateLimitPerSecond: 1000 });
  us = await approvedCustomer(t.api, 'US');
});
afterEach(expectLedgerBalanced);

test('30 concurrent transfers of a tenth of a bitcoin wallet funded by one coin: the 9 that fit with their fees are accepted, sent in one block from its unconfirmed change, and all paid', async () => {
  const w = await fundedWallet(t, us, 'bitcoin', 'btc', '0.1', 8, () => mineBlocks(1));
  const results = await thirtyFromWallet(t, us, w, 'bitcoin', 'btc', '0.01', outsideAddress());
  const accepted = results.filter((r) => r.status === 201);
  expect(accepted).toHaveLength(9);
  for (const r of results.filter((x) => x.status !== 201)) expect([r.status, r.body.error.source.key]).toEqual([409, 'source.wallet_id']);
  // All 9 sends are signed and out before any block holds one: each spends the change of the one before.
  const ids = accepted.map((r) => r.body.id);
  const sends = await waitFor(async () => {
    const rows = await testDb().selectFrom('wallet_signed_transactions').select('tx_hash').where('transfer_id', 'in', ids).execute();
    return rows.length === 9 ? rows : undefined;
  }, { what: 'the 9 wallet sends signed', timeoutMs: 60_000 });
  const mempool = await bitcoinRpc().call<string[]>('getrawmempool', []);
  expect(sends.filter((s) => mempool.includes(s.tx_hash!))).toHaveLength(9);
  await mineBlocks(1);
  const heights = await testDb().selectFrom('bitcoin_outputs').select('height').distinct().where('txid', 'in', sends.map((s) => s.tx_hash!)).execute()
    .then(async (rows) => rows.length > 0 ? rows : waitFor(async () => {
      const again = await testDb().selectFrom('bitcoin_outputs').select('height').distinct().where('txid', 'in', sends.map((s) => s.tx_hash!)).execute();
      return again.length > 0 ? again : undefined;
    }, { what: 'the sends indexed' }));
  expect(heights).toHaveLength(1);
  await expectAllProcessed(t, ids, whileMining);
}, 300_000);

test('a bitcoin output index that needs an operator (a reorganisation deeper than it follows): bitcoin answers 503 naming the chain, /readyz shows it degraded, other chains go on', async () => {
  const w = (await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['bitcoin'] })).body;
  await mineBlocks(1);
  const { top } = (await testDb().selectFrom('bitcoin_blocks').select((eb) => eb.fn.max('height').as('top')).executeTakeFirstOrThrow());
  const kept = await testDb().selectFrom('bitcoin_blocks').selectAll().where('height', '>', top! - 102).execute();
  // The index's newest 102 blocks are no longer the node's: deeper than the 100 it follows back.
  await testDb().updateTable('bitcoin_blocks').set({ hash: '00'.repeat(32) }).where('height', '>', top! - 102).execute();
  try {
    await mineBlocks(1);
    const balances = await waitFor(async () => {
      const res = await t.api.get(`/v0/wallets/${w.id}/balances`);
      return res.status === 503 ? res : undefined;
    }, { what: 'the balances refused 503', timeoutMs: 30_000 });
    expect(balances.body.error).toMatchObject({ code: 'service_unavailable' });
    expect(balances.body.error.message).toMatch(/^bitcoin is unavailable until an operator acts: .*the output index needs an operator/);
    const wallet = await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['bitcoin'] });
    expect([wallet.status, wallet.body.error.message]).toEqual([503, expect.stringMatching(/^bitcoin is unavailable/)]);
    const transfer = await t.api.post('/v0/transfers', {
      amount: '100.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: outsideAddress() },
    });
    expect([transfer.status, transfer.body.error.message]).toEqual([503, expect.stringMatching(/^bitcoin is unavailable/)]);
    const ready = await (await fetch(`${stack().apiUrl}/readyz`)).json() as any;
    expect(ready.status.chains).toMatchObject({ bitcoin: expect.stringMatching(/^degraded: .*needs an operator/), base: 'ok', solana: 'ok' });
    // The other chains go on.
    expect((await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['base'] })).status).toBe(201);
  } finally {
    for (const b of kept) await testDb().updateTable('bitcoin_blocks').set({ hash: b.hash }).where('height', '=', b.height).execute();
  }
  // Set right, bitcoin answers again.
  await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/balances`)).status === 200, { what: 'the balances answered again', timeoutMs: 30_000 });
}, 120_000);
