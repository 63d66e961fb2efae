import { sql } from 'kysely';
import { createPublicClient, getAddress, http, parseAbiItem } from 'viem';
import { apiClient, createTenant, temporalClient, testDb, waitFor } from '../harness';
import { expectNowhereInClear, stackKeyVault } from '../harness/secrets';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import {
  approvedCustomer, chainKeys, chainUrl, freshReceiver, RECEIVER, sandboxDeposit, tokenBalance, transferTestParties, waitForTransferState,
} from '../harness/transfers';
import { sandboxTokenAddress } from '../../src/chains/evm';
import type { EvmChain } from '../../src/domain/rails';

// Transfers from and to custodial wallets: the wallet's key signs the deposit, a destination wallet is
// paid at its address, refunds go back to the wallet. (HTTP → API → PostgreSQL → Temporal → anvil.)

const { parties: p } = transferTestParties();

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

async function fundedWallet(chain: EvmChain, currency: string, amount: string) {
  const w = (await p.t.api.post('/v0/wallets', { customer_id: p.us.id, type: 'custodial', chains: [chain] })).body;
  expect((await p.t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain, currency, amount })).status).toBe(200);
  // Spendable once deep enough.
  await waitFor(async () => (await p.t.api.get(`/v0/wallets/${w.id}/balances`)).body.data.find((b: any) => b.currency === currency && b.pending === '0.000000' && b.balance !== '0.000000'));
  return w;
}

const fromWallet = (w: any, chain: string, currency: string, amount: string, destination: Record<string, unknown>) => ({
  amount, on_behalf_of: p.us.id, source: { payment_rail: chain, currency, wallet_id: w.id }, destination: { payment_rail: chain, currency, ...destination },
});

test("wallet → external address: the wallet's own key signs the deposit; the payout arrives; the wallet's history names the transfer", async () => {
  const w = await fundedWallet('base', 'usdc', '50');
  const receiver = freshReceiver();
  const res = await p.t.api.post('/v0/transfers', fromWallet(w, 'base', 'usdc', '20.00', { to_address: receiver }));
  expect(res.status).toBe(201);
  expect(res.body.source).toEqual({ payment_rail: 'base', currency: 'usdc', from_address: w.addresses.base, wallet_id: w.id });
  expect(res.body.source_deposit_instructions).toMatchObject({ wallet_id: w.id, from_address: w.addresses.base, amount: '20.000000' });
  const done = await waitForTransferState(p.t.api, res.body.id, 'payment_processed', 90_000);

  // On chain, the deposit's sender is the wallet's address: its key signed it.
  const client = createPublicClient({ transport: http(chainUrl('base')) });
  const deposit = await client.getTransaction({ hash: done.receipt.source_tx_hash });
  expect(getAddress(deposit.from)).toBe(getAddress(w.addresses.base));
  expect(await tokenBalance('base', 'usdc', receiver)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));
  expect(await tokenBalance('base', 'usdc', w.addresses.base)).toBe(30_000_000n);
  const leg = await waitFor(async () => (await p.t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.direction === 'outgoing'));
  expect(leg).toMatchObject({ amount: '20.000000', tx_hash: done.receipt.source_tx_hash, transfer_id: res.body.id, counterparty_address: getAddress(res.body.source_deposit_instructions.to_address) });

  // The key the worker opened to sign is in no table, event, workflow input or log.
  const row = await testDb().selectFrom('wallets').select('key_sealed').where('id', '=', w.id).executeTakeFirstOrThrow();
  const vault = stackKeyVault();
  const key = (await vault.open(row.key_sealed!, { purpose: 'wallet-key', wallet_id: w.id })).toString('hex');
  await expectNowhereInClear(key);
  const history = await (await temporalClient()).workflow.getHandle(`transfer:${res.body.id}`).fetchHistory();
  expect(JSON.stringify(history).includes(key)).toBe(false);
  expect(JSON.stringify(history).includes(Buffer.from(key, 'hex').toString('base64'))).toBe(false);
}, 120_000);

test('more than the wallet can spend is refused (409) before anything moves: its holdings, less what open transfers reserved', async () => {
  const w = await fundedWallet('optimism', 'usdt', '50');
  const count = async () => Number((await sql<{ n: string }>`select count(*)::text as n from transfers where source_wallet_id = ${w.id}`.execute(testDb())).rows[0]!.n);
  const tooMuch = await p.t.api.post('/v0/transfers', fromWallet(w, 'optimism', 'usdt', '50.01', { to_address: RECEIVER }));
  expect(tooMuch.status).toBe(409);
  expect(tooMuch.body.error).toMatchObject({ code: 'invalid_state', source: { location: 'body', key: 'source.wallet_id' } });
  expect(tooMuch.body.error.message).toMatch(/can spend 50\.000000 usdt on optimism .* the transfer needs 50\.01/);
  expect(await count()).toBe(0);

  // The first reserves 30 (its deposit not yet seen); a second 30 is more than the 20 left.
  const first = await p.t.api.post('/v0/transfers', fromWallet(w, 'optimism', 'usdt', '30.00', { to_address: RECEIVER }));
  expect([first.status, first.body.error?.message]).toEqual([201, undefined]);
  const second = await p.t.api.post('/v0/transfers', fromWallet(w, 'optimism', 'usdt', '30.00', { to_address: RECEIVER }));
  if (second.status !== 201) {
    expect(second.status).toBe(409);
    expect(second.body.error.message).toMatch(/reserved by its open transfers/);
  }
  await waitForTransferState(p.t.api, first.body.id, 'payment_processed', 90_000);
  // Whichever way the second went, the wallet never sent more than it held.
  expect(await tokenBalance('optimism', 'usdt', w.addresses.optimism)).toBeGreaterThanOrEqual(0n);
  if (second.status === 201) expect((await waitForTransferState(p.t.api, second.body.id, 'canceled', 60_000)).state_reason).toMatch(/wallet_send_refused/);
  expect(await tokenBalance('optimism', 'usdt', w.addresses.optimism)).toBe(20_000_000n);
}, 150_000);

test("fpnet, the platform's own chain (one-second blocks, its native asset fpn, USDC): a wallet on it pays out there, and an ACH onramp pays USDC on it", async () => {
  const w = await fundedWallet('fpnet', 'usdc', '30');
  const receiver = freshReceiver();
  const sent = (await p.t.api.post('/v0/transfers', fromWallet(w, 'fpnet', 'usdc', '12.00', { to_address: receiver }))).body;
  expect(sent.source).toMatchObject({ payment_rail: 'fpnet', wallet_id: w.id });
  await waitForTransferState(p.t.api, sent.id, 'payment_processed', 90_000);
  expect(await tokenBalance('fpnet', 'usdc', receiver)).toBe(BigInt(sent.receipt.final_amount.replace('.', '')));
  // The wallet's balances on fpnet, gas in fpn paid by the platform's treasury.
  const balances = (await p.t.api.get(`/v0/wallets/${w.id}/balances`)).body.data;
  expect(balances.map((b: any) => [b.chain, b.currency])).toEqual(expect.arrayContaining([['fpnet', 'usdc']]));

  const onramp = (await p.t.api.post('/v0/transfers', {
    amount: '15.00', on_behalf_of: p.us.id, source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'fpnet', currency: 'usdc', to_address: RECEIVER },
  })).body;
  expect(BigInt(onramp.receipt.gas_fee.replace('.', ''))).toBeGreaterThan(0n);
  await sandboxDeposit(p.t.api, onramp.id);
  const paid = await waitForTransferState(p.t.api, onramp.id, 'payment_processed', 90_000);
  expect(paid.receipt.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  // Only its listed asset: USDT is not carried on fpnet.
  const usdt = await p.t.api.post('/v0/transfers', { ...fromWallet(w, 'fpnet', 'usdt', '1.00', { to_address: RECEIVER }) });
  expect(usdt.status).toBe(400);
}, 150_000);

test('an undeliverable payout from a wallet is refunded to the wallet', async () => {
  const w = await fundedWallet('polygon', 'usdt', '25');
  const tr = (await p.t.api.post('/v0/transfers', fromWallet(w, 'polygon', 'usdt', '25.00', { to_address: '0x00000000000000000000000000000000000b10c5' }))).body;
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded', 90_000);
  expect(refunded.state_reason).toMatch(/blocks the destination address/);
  const refund = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data[0];
  expect(getAddress(refund.to_address)).toBe(getAddress(w.addresses.polygon));
  await waitFor(async () => (await p.t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.direction === 'incoming' && x.transfer_id === tr.id && x.state === 'confirmed'));
}, 120_000);

test('ACH → wallet: the payout goes to the wallet, whose history shows it as the transfer\'s', async () => {
  const w = (await p.t.api.post('/v0/wallets', { customer_id: p.us.id, type: 'custodial', chains: ['arbitrum'] })).body;
  const res = await p.t.api.post('/v0/transfers', {
    amount: '40.00', on_behalf_of: p.us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'arbitrum', currency: 'usdc', wallet_id: w.id },
  });
  expect(res.status).toBe(201);
  expect(res.body.destination).toEqual({ payment_rail: 'arbitrum', currency: 'usdc', to_address: w.addresses.arbitrum, wallet_id: w.id });
  await sandboxDeposit(p.t.api, res.body.id);
  const done = await waitForTransferState(p.t.api, res.body.id, 'payment_processed', 90_000);
  const leg = await waitFor(async () => (await p.t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.state === 'confirmed'));
  expect(leg).toMatchObject({ direction: 'incoming', tx_hash: done.receipt.destination_tx_hash, transfer_id: res.body.id, amount: done.receipt.final_amount });
}, 120_000);

test('bad wallet references are refused, naming the field, and create nothing', async () => {
  const w = (await p.t.api.post('/v0/wallets', { customer_id: p.us.id, type: 'custodial', chains: ['base'] })).body;
  const other = await approvedCustomer(p.t.api);
  const otherTenant = await createTenant();
  const foreign = (await otherTenant.api.post('/v0/wallets', { customer_id: (await approvedCustomer(otherTenant.api)).id, type: 'custodial', chains: ['base'] })).body;
  const before = Number((await sql<{ n: string }>`select count(*)::text as n from transfers where developer_id = ${p.t.developerId}`.execute(testDb())).rows[0]!.n);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ source: { payment_rail: 'base', currency: 'usdc', wallet_id: foreign.id } }, 'source.wallet_id', /No such wallet/],
    [{ on_behalf_of: other.id }, 'source.wallet_id', /belongs to another customer/],
    [{ source: { payment_rail: 'polygon', currency: 'usdc', wallet_id: w.id } }, 'source.wallet_id', /holds base, not polygon/],
    [{ source: { payment_rail: 'base', currency: 'usdc', wallet_id: w.id, from_address: RECEIVER } }, 'source.from_address', /leave it out/],
    [{ source: { payment_rail: 'ach', currency: 'usd', wallet_id: w.id } }, 'source.wallet_id', /only for chain sources/],
    [{ destination: { payment_rail: 'base', currency: 'usdc', wallet_id: w.id, to_address: RECEIVER } }, 'destination.wallet_id', /alone/],
  ];
  for (const [patch, key, message] of cases) {
    const res = await p.t.api.post('/v0/transfers', { ...fromWallet(w, 'base', 'usdc', '5.00', { to_address: RECEIVER }), ...patch });
    expect([key, res.status]).toEqual([key, 400]);
    expect(res.body.error.source).toEqual({ location: 'body', key });
    expect(res.body.error.message).toMatch(message);
  }
  expect((await apiClient(p.t.publishable).post('/v0/transfers', fromWallet(w, 'base', 'usdc', '5.00', { to_address: RECEIVER }))).status).toBe(403);
  expect(Number((await sql<{ n: string }>`select count(*)::text as n from transfers where developer_id = ${p.t.developerId}`.execute(testDb())).rows[0]!.n)).toBe(before);
});

describe('a worker killed between signing and broadcast', () => {
  const own = apiAndWorkerOfTheirOwn('wallet-crash');
  // Until it polls: the test's wait for the signature then leaves out a start that takes a minute on a loaded machine.
  beforeAll(() => own.startFirstWorker(), 180_000);

  test('sends exactly one transaction from the wallet: the stored one, after the restart', async () => {
    const w = await fundedWallet('ethereum', 'usdc', '15');
    const client = createPublicClient({ transport: http(chainUrl('ethereum')) });
    const fromBlock = await client.getBlockNumber();
    const crashApi = apiClient(p.t.secret, own.url());
    const tr = await waitFor(async () => {
      const res = await crashApi.post('/v0/transfers', fromWallet(w, 'ethereum', 'usdc', '15.00', { to_address: RECEIVER }));
      return res.status === 201 && res.body;
    }, { what: 'the transfer to be created' });
    const signed = () => testDb().selectFrom('wallet_signed_transactions').select('tx_hash').where('transfer_id', '=', tr.id).where('tx_hash', 'is not', null).executeTakeFirst();
    await waitFor(async () => Boolean(await signed()), { intervalMs: 2, timeoutMs: 60_000, what: 'the deposit to be signed' });
    own.killWorker();
    await new Promise((r) => setTimeout(r, 300));
    own.startWorker();
    const done = await waitForTransferState(p.t.api, tr.id, 'payment_processed', 90_000);
    const sent = await client.getLogs({ address: sandboxTokenAddress(chainKeys, 'ethereum', 'usdc'), event: TRANSFER_EVENT, args: { from: getAddress(w.addresses.ethereum) }, fromBlock });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.transactionHash).toBe((await signed())!.tx_hash);
    expect(sent[0]!.transactionHash).toBe(done.receipt.source_tx_hash);
  }, 150_000);
});
