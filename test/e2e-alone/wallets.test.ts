import { sql } from 'kysely';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { randomBytes } from 'node:crypto';
import { createPublicClient, createTestClient, createWalletClient, erc20Abi, getAddress, http } from 'viem';
import { polygon } from 'viem/chains';
import { apiClient, createTenant, individual, runCli, stack, testDb, waitFor, type Tenant } from '../harness';
import { approvedCustomer, chainKeys, chainUrl, expectLedgerBalanced, tokenBalance } from '../harness/transfers';
import { sandboxTokenAddress } from '../../src/chains/evm';
import { walletSolanaAddress } from '../../src/chains/solana/keys';
import { localKeyVault } from '../../src/keys/key-vault';
import { expectNowhereInClear, stackKeyVault } from '../harness/secrets';

// Alone: a rewrap moves every tenant's wallet key; and beside other files, the read of a deposit still
// pending at one block saw it confirmed already.

let t: Tenant;
let customerId: string;
beforeAll(async () => {
  t = await createTenant();
  customerId = (await approvedCustomer(t.api)).id;
});

const balanceOf = (balances: any[], chain: string, currency: string) => balances.find((b) => b.chain === chain && b.currency === currency);

describe('custodial wallets', () => {
  // solana runs on its node; tron is a simulated chain, and the wallet says so.
  test('a wallet on a simulated chain lists it in simulated_chains', async () => {
    const w = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['solana', 'tron'] })).body;
    expect([w.chains, w.simulated_chains]).toEqual([['solana', 'tron'], ['tron']]);
  });

  test('created with one address on every EVM chain; the key is sealed at rest; listed, read, and announced', async () => {
    const res = await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', label: 'Treasury', chains: ['base', 'Polygon', 'solana'] });
    expect(res.status).toBe(201);
    const w = res.body;
    expect(w).toMatchObject({
      object: 'wallet', customer_id: customerId, type: 'custodial', label: 'Treasury', chains: ['base', 'polygon', 'solana'], simulated_chains: [], status: 'active',
    });
    expect(w.id).toMatch(/^wal_/);
    expect(w.addresses.base).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(w.addresses.polygon).toBe(w.addresses.base);
    expect(w.addresses.solana).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);

    // The stored key opens only with the KEK and only for this wallet, and is the key of the address.
    const row = await testDb().selectFrom('wallets').selectAll().where('id', '=', w.id).executeTakeFirstOrThrow();
    const vault = stackKeyVault();
    expect(row.kek_id).toBe(vault.currentKekId);
    const key = await vault.open(row.key_sealed!, { purpose: 'wallet-key', wallet_id: w.id });
    expect(privateKeyToAddress(`0x${key.toString('hex')}`)).toBe(w.addresses.base);
    expect(walletSolanaAddress(key)).toBe(w.addresses.solana);
    await expect(vault.open(row.key_sealed!, { purpose: 'wallet-key', wallet_id: 'wal_other' })).rejects.toThrow();
    // Nowhere in the clear: not in any table, not in the logs.
    await expectNowhereInClear(key.toString('hex'));

    expect((await t.api.get(`/v0/wallets/${w.id}`)).body).toEqual(w);
    expect((await t.api.get(`/v0/customers/${customerId}/wallets`)).body.data.map((x: any) => x.id)).toContain(w.id);
    expect((await t.api.get('/v0/wallets?chain=solana')).body.data.map((x: any) => x.id)).toContain(w.id);
    expect((await t.api.get('/v0/wallets?chain=tron')).body.data.map((x: any) => x.id)).not.toContain(w.id);
    const events = (await t.api.get(`/v0/events?object_id=${w.id}`)).body.data;
    expect(events.map((e: any) => e.event)).toEqual(['wallet.created']);
    expect(events[0].data).toEqual(w);
  });

  test('a funded wallet shows the deposit pending, then in its balance once it is deep enough', async () => {
    const w = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base', 'solana'] })).body;
    const empty = (await t.api.get(`/v0/wallets/${w.id}/balances`)).body;
    expect(empty.object).toBe('list');
    expect(empty.data.map((b: any) => `${b.chain}:${b.currency}`)).toEqual(['base:eth', 'base:usdc', 'base:usdt', 'solana:sol', 'solana:usdc', 'solana:usdt']);
    expect(balanceOf(empty.data, 'base', 'usdc')).toEqual({ chain: 'base', currency: 'usdc', balance: '0.000000', pending: '0.000000' });

    // A deposit counts once EVM_CONFIRMATIONS (2) blocks deep: read while its block is still the newest
    // one (no block mined between the two looks at the chain around the read), it shows as pending.
    // No cached block number (viem keeps one for 4 s): each look asks the node.
    const base = createPublicClient({ transport: http(chainUrl('base')), cacheTime: 0 });
    let funded = 0;
    let seenPending = false;
    for (let tries = 0; tries < 40 && !seenPending; tries++) {
      const fund = await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'base', currency: 'usdc', amount: '5.00' });
      expect(fund.status).toBe(200);
      funded += 5;
      const { blockNumber } = await base.getTransactionReceipt({ hash: fund.body.tx_hash });
      const before = await base.getBlockNumber();
      const read = balanceOf((await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data, 'base', 'usdc');
      const after = await base.getBlockNumber();
      if (before === blockNumber && after === blockNumber) {
        expect(read).toMatchObject({ balance: `${funded - 5}.000000`, pending: '5.000000' });
        seenPending = true;
      }
    }
    expect(seenPending).toBe(true);
    const deep = await waitFor(async () => {
      const b = balanceOf((await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data, 'base', 'usdc');
      return b.pending === '0.000000' && b;
    });
    expect(deep).toMatchObject({ balance: `${funded}.000000`, pending: '0.000000' });
    expect(await tokenBalance('base', 'usdc', w.addresses.base)).toBe(BigInt(funded) * 1_000_000n);

    expect((await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'solana', currency: 'usdt', amount: '3.5' })).status).toBe(200);
    const simulated = (await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data;
    expect(balanceOf(simulated, 'solana', 'usdt')).toEqual({ chain: 'solana', currency: 'usdt', balance: '3.500000', pending: '0.000000' });
    await expectLedgerBalanced();
  });

  test("the chain's watcher records each deposit in the wallet's history, pending then confirmed, with its events", async () => {
    const w = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base', 'stellar'] })).body;
    // A deposit is seen pending when the watcher looks while its block is still the newest (blocks come
    // four a second here, looks every 0.5 s); deposits are made until one is, each confirmed in the end.
    let seenPending = false;
    for (let n = 1; n <= 20 && !seenPending; n++) {
      const fund = (await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'base', currency: 'usdt', amount: '12.5' })).body;
      const confirmed = await waitFor(async () => {
        // Up to 20 deposits: past the default page of 10.
        const list = (await t.api.get(`/v0/wallets/${w.id}/transactions?limit=100`)).body.data;
        return list.length === n && list[0].state === 'confirmed' && list[0];
      }, { what: 'the deposit to be confirmed in the history' });
      expect(confirmed).toMatchObject({
        object: 'wallet_transaction', wallet_id: w.id, chain: 'base', currency: 'usdt', direction: 'incoming', amount: '12.500000',
        tx_hash: fund.tx_hash, counterparty_address: '0x0000000000000000000000000000000000000000', transfer_id: null,
      });
      expect(confirmed.id).toMatch(/^wtx_/);
      expect(confirmed.confirmations).toBeGreaterThanOrEqual(2);
      const events = (await t.api.get(`/v0/events?object_id=${confirmed.id}`)).body.data;
      const created = events.find((e: any) => e.event === 'wallet.transaction.created');
      expect(created.data).toMatchObject({ id: confirmed.id, tx_hash: fund.tx_hash });
      if (created.data.state === 'pending') {
        seenPending = true;
        expect(events.map((e: any) => e.event).sort()).toEqual(['wallet.transaction.created', 'wallet.transaction.updated']);
        const updated = events.find((e: any) => e.event === 'wallet.transaction.updated');
        expect(updated.data).toMatchObject({ id: confirmed.id, state: 'confirmed', previous_attributes: { state: 'pending' } });
      } else {
        expect([created.data.state, events.length]).toEqual(['confirmed', 1]);
      }
    }
    expect(seenPending).toBe(true);

    // A simulated chain's transfer is final at once.
    await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'stellar', currency: 'usdc', amount: '7' });
    const stellar = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions?chain=stellar`)).body.data[0]);
    expect(stellar).toMatchObject({ chain: 'stellar', currency: 'usdc', amount: '7.000000', direction: 'incoming', state: 'confirmed' });
    const all = (await t.api.get(`/v0/wallets/${w.id}/transactions?limit=1`)).body;
    expect(all.data.map((x: any) => x.id)).toEqual([stellar.id]);
    expect(all.has_more).toBe(true);
    expect((await t.api.get(`/v0/wallets/${w.id}/transactions?state=pending`)).body.data).toEqual([]);
  });

  test("a token transfer between two wallets shows in both histories: out of one, into the other", async () => {
    const from = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['polygon'] })).body;
    const to = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['polygon'] })).body;
    await t.api.post(`/v0/sandbox/wallets/${from.id}/fund`, { chain: 'polygon', currency: 'usdc', amount: '10' });
    // Signed here with the wallet's own key (transfers from wallets come with the next step).
    const row = await testDb().selectFrom('wallets').select('key_sealed').where('id', '=', from.id).executeTakeFirstOrThrow();
    const vault = stackKeyVault();
    const account = privateKeyToAccount(`0x${(await vault.open(row.key_sealed!, { purpose: 'wallet-key', wallet_id: from.id })).toString('hex')}`);
    const url = chainUrl('polygon');
    await createTestClient({ mode: 'anvil', transport: http(url) }).setBalance({ address: account.address, value: 10n ** 18n });
    const client = createWalletClient({ account, transport: http(url), chain: { ...polygon, id: await createPublicClient({ transport: http(url) }).getChainId() } });
    const hash = await client.writeContract({
      address: sandboxTokenAddress(chainKeys, 'polygon', 'usdc'), abi: erc20Abi, functionName: 'transfer', args: [getAddress(to.addresses.polygon), 4_000_000n],
    });
    const sent = await waitFor(async () => (await t.api.get(`/v0/wallets/${from.id}/transactions`)).body.data.find((x: any) => x.tx_hash === hash && x.state === 'confirmed'));
    expect(sent).toMatchObject({ direction: 'outgoing', amount: '4.000000', counterparty_address: getAddress(to.addresses.polygon) });
    const received = await waitFor(async () => (await t.api.get(`/v0/wallets/${to.id}/transactions`)).body.data.find((x: any) => x.tx_hash === hash && x.state === 'confirmed'));
    expect(received).toMatchObject({ direction: 'incoming', amount: '4.000000', counterparty_address: getAddress(from.addresses.polygon) });
    const other = await createTenant();
    expect((await other.api.get(`/v0/wallets/${from.id}/transactions`)).status).toBe(404);
  });

  test('bad input is refused, naming the field, and creates nothing', async () => {
    const count = async () => Number((await sql<{ n: string }>`select count(*)::text as n from wallets`.execute(testDb())).rows[0]!.n);
    const before = await count();
    const cases: [Record<string, unknown>, string, number, RegExp][] = [
      [{ chains: ['base', 'dogecoin'] }, 'chains[1]', 400, /not a chain wallets are served on/],
      [{ chains: ['litecoin'] }, 'chains[0]', 400, /not a chain wallets are served on/],
      [{ chains: [] }, 'chains', 400, /at least one chain/],
      [{ mpc_config: { threshold: 2, total_shares: 3, key_type: 'ecdsa' } }, 'mpc_config', 400, /for mpc wallets only/],
      [{ customer_id: 'cus_nothere' }, 'customer_id', 400, /No such customer/],
    ];
    for (const [patch, key, status, message] of cases) {
      const res = await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base'], ...patch });
      expect([key, res.status]).toEqual([key, status]);
      expect(res.body.error.source).toEqual({ location: 'body', key });
      expect(res.body.error.message).toMatch(message);
    }
    const pending = (await t.api.post('/v0/customers', individual())).body;
    const notApproved = await t.api.post('/v0/wallets', { customer_id: pending.id, type: 'custodial', chains: ['base'] });
    expect(notApproved.status).toBe(409);
    expect(notApproved.body.error.message).toMatch(/KYC-approved/);
    const unfunded = await t.api.post(`/v0/sandbox/wallets/${(await t.api.get(`/v0/customers/${customerId}/wallets`)).body.data[0].id}/fund`, { chain: 'tron', currency: 'usdt', amount: '1' });
    expect(unfunded.status).toBe(400);
    expect(await count()).toBe(before);
  });

  test("another tenant's wallet is not found; a publishable or read-only key cannot create one", async () => {
    const w = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base'] })).body;
    const other = await createTenant();
    expect((await other.api.get(`/v0/wallets/${w.id}`)).status).toBe(404);
    expect((await other.api.get(`/v0/wallets/${w.id}/balances`)).status).toBe(404);
    expect((await other.api.get(`/v0/customers/${customerId}/wallets`)).status).toBe(404);
    expect((await other.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'base', currency: 'usdc', amount: '1' })).status).toBe(404);
    expect((await apiClient(t.publishable).post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base'] })).status).toBe(403);
    const reader = apiClient((await t.key({ permissions: ['accounts:read'] })).key);
    expect((await reader.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base'] })).status).toBe(403);
    expect((await reader.get(`/v0/wallets/${w.id}`)).status).toBe(200);
  });

  test('keys rewrap moves every wallet key to a new KEK, and back; each still opens to its address', async () => {
    const w = (await t.api.post('/v0/wallets', { customer_id: customerId, type: 'custodial', chains: ['base'] })).body;
    const stackKek = stack().processEnv.WALLET_KEK!;
    const newKek = randomBytes(32).toString('base64');
    const addressUnder = async (kek: string) => {
      const row = await testDb().selectFrom('wallets').select(['key_sealed', 'kek_id']).where('id', '=', w.id).executeTakeFirstOrThrow();
      const vault = localKeyVault({ kek: Buffer.from(kek, 'base64'), dataDir: '/nonexistent', allowGenerated: false });
      expect(row.kek_id).toBe(vault.currentKekId);
      return privateKeyToAddress(`0x${(await vault.open(row.key_sealed!, { purpose: 'wallet-key', wallet_id: w.id })).toString('hex')}`);
    };

    const forward = runCli(['keys', 'rewrap'], { WALLET_KEK: newKek, WALLET_KEK_PREVIOUS: stackKek });
    expect(forward.stderr).toBe('');
    expect(forward.status).toBe(0);
    expect(forward.stdout).toMatch(/done: [1-9]\d* moved/);
    expect(await addressUnder(newKek)).toBe(w.addresses.base);
    // Back under the stack's own KEK, so its processes go on opening every key.
    const back = runCli(['keys', 'rewrap'], { WALLET_KEK: stackKek, WALLET_KEK_PREVIOUS: newKek });
    expect(back.status).toBe(0);
    expect(await addressUnder(stackKek)).toBe(w.addresses.base);
    expect(runCli(['keys', 'rewrap'], { WALLET_KEK: stackKek }).stdout).toMatch(/done: 0 moved/);
  });
});
