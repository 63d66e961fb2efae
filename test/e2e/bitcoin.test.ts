import { hex } from '@scure/base';
import { Address, OutScript, Transaction } from '@scure/btc-signer';
import { outputsOf } from '../../src/chains/bitcoin/coins';
import { BITCOIN_NETWORKS } from '../../src/chains/bitcoin/keys';
import { formatAmount, parseAmount } from '../../src/domain/money';
import { createTenant, testDb, waitFor, type Tenant } from '../harness';
import { bitcoinKeys, bitcoinRpc, mineBlocks, outsideAddress, whileMining } from '../harness/bitcoin';
import { approvedCustomer, expectChainHistoriesReplay, expectLedgerBalanced, sandboxDeposit, verifiedUsAccount, waitForTransferState } from '../harness/transfers';

// Bitcoin on its node (the sandbox's btcd in regtest, blocks mined by the test): wallets with P2WPKH
// addresses, balances and history from the platform's output index; transfers whose coins are
// selected, signed, stored and broadcast by the platform, their fee in the receipt.

let t: Tenant;
/** The transfers of this file, whose histories the last test replays. */
const transferIds: string[] = [];

beforeAll(async () => {
  t = await createTenant();
});
afterEach(expectLedgerBalanced);

const btc = (amount: string) => parseAmount(amount, 8)!;

/** What the index holds paid to `address` by transaction `txid`. */
async function paidTo(address: string, txid?: string): Promise<bigint> {
  let q = testDb().selectFrom('bitcoin_outputs').select('amount_sats').where('address', '=', address);
  if (txid) q = q.where('txid', '=', txid);
  return (await q.execute()).reduce((s, r) => s + BigInt(r.amount_sats), 0n);
}

test('a bitcoin wallet: funded, its balance pending under six blocks then spendable, its history; a transfer from it to an outside address', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const w = (await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['bitcoin'] })).body;
  expect(w.addresses.bitcoin).toMatch(/^bcrt1q[02-9ac-hj-np-z]{38}$/);
  expect(w.simulated_chains).toEqual([]);
  expect((await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'bitcoin', currency: 'btc', amount: '0.5' })).status).toBe(200);
  const balance = async () => (await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data.find((b: any) => b.currency === 'btc');
  /** The balance once it reads as expected (a process looks at the node's tip at most every BITCOIN_INDEX_REUSE_MS). */
  const balanceBecomes = (expected: { balance: string; pending: string }) => waitFor(async () => {
    const b = await balance();
    return b.balance === expected.balance && b.pending === expected.pending ? b : undefined;
  }, { what: `the balance ${JSON.stringify(expected)}`, timeoutMs: 10_000 });
  await mineBlocks(1);
  expect(await balanceBecomes({ balance: '0.00000000', pending: '0.50000000' })).toMatchObject({ chain: 'bitcoin' });
  await mineBlocks(5);
  await balanceBecomes({ balance: '0.50000000', pending: '0.00000000' });
  // bitcoin's one currency is its native asset: listed once.
  expect((await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data).toEqual([{ chain: 'bitcoin', currency: 'btc', balance: '0.50000000', pending: '0.00000000' }]);
  const incoming = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.direction === 'incoming' && x.state === 'confirmed'),
    { what: 'the funding in the wallet\'s history', timeoutMs: 30_000 });
  expect(incoming).toMatchObject({ chain: 'bitcoin', currency: 'btc', amount: '0.50000000', counterparty_address: bitcoinKeys.faucet.address });

  const receiver = outsideAddress();
  // All it holds cannot go: sending it costs a fee, paid in the same coin.
  const whole = await t.api.post('/v0/transfers', {
    amount: '0.5', on_behalf_of: us.id, source: { payment_rail: 'bitcoin', currency: 'btc', wallet_id: w.id },
    destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: receiver },
  });
  expect([whole.status, whole.body.error.source]).toEqual([409, { location: 'body', key: 'source.wallet_id' }]);
  expect(whole.body.error.message).toMatch(/the transfer needs 0\.50000000 and about 0\.0000\d+ for the network fee of sending it$/);
  const res = await t.api.post('/v0/transfers', {
    amount: '0.1', on_behalf_of: us.id, source: { payment_rail: 'bitcoin', currency: 'btc', wallet_id: w.id },
    destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: receiver },
  });
  expect([res.status, res.body.error]).toEqual([201, undefined]);
  transferIds.push(res.body.id);
  const done = await whileMining(waitForTransferState(t.api, res.body.id, 'payment_processed', 90_000));
  const gasFee = btc(done.receipt.gas_fee);
  expect(gasFee).toBeGreaterThan(0n);
  // The receiver got the final amount once, in the payout's transaction.
  expect(await paidTo(receiver)).toBe(btc(done.receipt.final_amount));
  expect(await paidTo(receiver, done.receipt.destination_tx_hash)).toBe(btc(done.receipt.final_amount));
  // What the reconciliation reads of it from the node's transaction index: the same payment; a transaction the node never saw is none.
  const raw = await bitcoinRpc().rawTransaction(done.receipt.destination_tx_hash);
  expect(outputsOf(raw!, BITCOIN_NETWORKS.regtest).filter((o) => o.address === receiver).map((o) => o.amount)).toEqual([btc(done.receipt.final_amount)]);
  expect(await bitcoinRpc().rawTransaction('ab'.repeat(32))).toBeNull();
  const payout = (await t.api.get(`/v0/payments?transfer_id=${res.body.id}&kind=payout`)).body.data[0];
  expect(payout).toMatchObject({ payment_rail: 'bitcoin', status: 'settled', tx_hash: done.receipt.destination_tx_hash });
  // The wallet paid 0.1 and its own transaction's fee; what is left came back to it as change.
  const sent = await testDb().selectFrom('wallet_signed_transactions').select('tx_hash').where('transfer_id', '=', res.body.id).executeTakeFirstOrThrow();
  const walletFee = btc('0.5') - btc('0.1') - (await paidTo(w.addresses.bitcoin, sent.tx_hash!));
  expect(walletFee).toBeGreaterThan(0n);
  await mineBlocks(6);
  await balanceBecomes({ balance: formatAmount(btc('0.4') - walletFee, 8), pending: '0.00000000' });
  const outgoing = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.direction === 'outgoing' && x.state === 'confirmed'),
    { what: 'the transfer in the wallet\'s history', timeoutMs: 30_000 });
  expect(outgoing).toMatchObject({ amount: '0.10000000', tx_hash: sent.tx_hash });
}, 180_000);

test('ACH in, BTC out to an outside address; BTC into a transfer\'s deposit address, out over ACH', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const receiver = outsideAddress();
  const onramp = await t.api.post('/v0/transfers', {
    amount: '600.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: receiver },
  });
  expect([onramp.status, onramp.body.error]).toEqual([201, undefined]);
  await sandboxDeposit(t.api, onramp.body.id);
  const paid = await whileMining(waitForTransferState(t.api, onramp.body.id, 'payment_processed', 90_000));
  expect(await paidTo(receiver)).toBe(btc(paid.receipt.final_amount));

  const account = await verifiedUsAccount(t.api, us.id);
  const offramp = await t.api.post('/v0/transfers', {
    amount: '0.01', on_behalf_of: us.id, source: { payment_rail: 'bitcoin', currency: 'btc', from_address: outsideAddress() },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
  });
  expect([offramp.status, offramp.body.error]).toEqual([201, undefined]);
  transferIds.push(offramp.body.id);
  const instructions = offramp.body.source_deposit_instructions;
  expect(instructions).toMatchObject({ payment_rail: 'bitcoin', currency: 'btc', amount: '0.01000000', to_address: expect.stringMatching(/^bcrt1q/) });
  await sandboxDeposit(t.api, offramp.body.id);
  const done = await whileMining(waitForTransferState(t.api, offramp.body.id, 'payment_processed', 90_000));
  expect(await paidTo(instructions.to_address, done.receipt.source_tx_hash)).toBe(btc('0.01'));
  // The deposit stays where it landed, the platform's coin: nothing is swept.
  expect(await testDb().selectFrom('chain_sweeps').select('sweep_key').where('transfer_id', '=', offramp.body.id).execute()).toEqual([]);
  expect(await paidTo(instructions.to_address)).toBe(btc('0.01'));
}, 180_000);

test('BTC into a customer\'s bitcoin wallet: ACH in, the payout to the wallet\'s address, in its balance and history', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const w = (await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['bitcoin'] })).body;
  const tr = await t.api.post('/v0/transfers', {
    amount: '120.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'bitcoin', currency: 'btc', wallet_id: w.id },
  });
  expect([tr.status, tr.body.error]).toEqual([201, undefined]);
  transferIds.push(tr.body.id);
  await sandboxDeposit(t.api, tr.body.id);
  const done = await whileMining(waitForTransferState(t.api, tr.body.id, 'payment_processed', 90_000));
  expect(await paidTo(w.addresses.bitcoin, done.receipt.destination_tx_hash)).toBe(btc(done.receipt.final_amount));
  const incoming = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.state === 'confirmed'),
    { what: 'the payout in the wallet\'s history', timeoutMs: 30_000 });
  expect(incoming).toMatchObject({ direction: 'incoming', amount: done.receipt.final_amount, tx_hash: done.receipt.destination_tx_hash });
  const held = (await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data.find((b: any) => b.currency === 'btc');
  expect(held).toMatchObject({ balance: done.receipt.final_amount, pending: '0.00000000' });
}, 120_000);

test('a payout no block takes for BITCOIN_RBF_AFTER_SECONDS is replaced at a higher fee from the same coins (BIP-125); the receiver is paid once', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const receiver = outsideAddress();
  const tr = (await t.api.post('/v0/transfers', {
    amount: '300.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: receiver },
  })).body;
  transferIds.push(tr.id);
  await sandboxDeposit(t.api, tr.id);
  // No block is mined: after 10 s (the test stack's setting) the payout is signed again at a higher fee.
  const payout = () => testDb().selectFrom('payments').select(['tx_hash', 'replaced_tx_hashes']).where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirstOrThrow();
  const bumped = await waitFor(async () => {
    const p = await payout();
    return (p.replaced_tx_hashes ?? []).length > 0 ? p : undefined;
  }, { what: 'the payout replaced', timeoutMs: 60_000 });
  const [first] = bumped.replaced_tx_hashes!;
  // The replacement is stored before it is broadcast: the node has it a moment later, in place of the first.
  const mempool = await waitFor(async () => {
    const txids = await bitcoinRpc().call<string[]>('getrawmempool');
    return txids.includes(bumped.tx_hash!) ? txids : undefined;
  }, { what: 'the replacement in the mempool', timeoutMs: 30_000 });
  expect(mempool).not.toContain(first);
  const done = await whileMining(waitForTransferState(t.api, tr.id, 'payment_processed', 90_000));
  expect(done.receipt.destination_tx_hash).toBe(bumped.tx_hash);
  // Once: the replaced transaction never made it into a block.
  expect(await paidTo(receiver)).toBe(btc(done.receipt.final_amount));
  expect(await testDb().selectFrom('bitcoin_outputs').select('txid').where('txid', '=', first!).execute()).toEqual([]);
  // The fee recorded is the replacement's: at least 4 sat/vB, where the first paid the floor's 2 or the node's estimate of 3.
  const settled = (await t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=payout`)).body.data[0];
  const stored = await testDb().selectFrom('payments').select('signed_transaction').where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirstOrThrow();
  const vsize = BigInt(Transaction.fromRaw(hex.decode(stored.signed_transaction!)).vsize);
  const fee = BigInt(settled.network_fee.split(' ')[0]);
  expect(fee / vsize).toBeGreaterThanOrEqual(4n);
}, 180_000);

test('payments under six blocks taken away by a reorganisation never count: the index unreads the blocks, the wallet\'s history drops them, the transfer stays unfunded', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const w = (await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['bitcoin'] })).body;
  const account = await verifiedUsAccount(t.api, us.id);
  const offramp = (await t.api.post('/v0/transfers', {
    amount: '0.02', on_behalf_of: us.id, source: { payment_rail: 'bitcoin', currency: 'btc', from_address: outsideAddress() },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
  })).body;
  const depositAddress = offramp.source_deposit_instructions.to_address;
  expect((await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'bitcoin', currency: 'btc', amount: '0.3' })).status).toBe(200);
  await sandboxDeposit(t.api, offramp.id);
  const [forked] = await mineBlocks(2);
  await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.state === 'pending'), { what: 'the funding seen, pending' });
  expect(await paidTo(depositAddress)).toBe(btc('0.02'));

  // The two blocks are taken away; their transactions go back to the mempool, where a spend of the
  // same coins back to the faucet at a higher fee replaces them (BIP-125): the new chain never pays.
  const rpc = bitcoinRpc();
  await rpc.call('invalidateblock', [forked]);
  const pendingTxids = await rpc.call<string[]>('getrawmempool');
  expect(pendingTxids.length).toBe(2);
  const conflict = new Transaction();
  let total = 0n;
  for (const txid of pendingTxids) {
    const tx = Transaction.fromRaw(hex.decode(await rpc.call<string>('getrawtransaction', [txid, 0])));
    for (let i = 0; i < tx.inputsLength; i++) {
      const input = tx.getInput(i);
      const coin = await testDb().selectFrom('bitcoin_outputs').select(['amount_sats', 'address']).where('txid', '=', hex.encode(input.txid!)).where('vout', '=', input.index!).executeTakeFirstOrThrow();
      total += BigInt(coin.amount_sats);
      conflict.addInput({ txid: input.txid!, index: input.index!, witnessUtxo: { script: OutScript.encode(Address(BITCOIN_NETWORKS.regtest).decode(coin.address)), amount: BigInt(coin.amount_sats) } });
    }
  }
  conflict.addOutputAddress(bitcoinKeys.faucet.address, total - 100_000n, BITCOIN_NETWORKS.regtest);
  conflict.sign(bitcoinKeys.faucet.privateKey());
  conflict.finalize();
  await rpc.sendRawTransaction(conflict.extract());
  await mineBlocks(8);

  const dropped = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.state === 'dropped'),
    { what: 'the funding dropped from the wallet\'s history', timeoutMs: 30_000 });
  expect(dropped).toMatchObject({ direction: 'incoming', amount: '0.30000000' });
  expect((await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data.find((b: any) => b.currency === 'btc')).toMatchObject({ balance: '0.00000000', pending: '0.00000000' });
  expect(await paidTo(depositAddress)).toBe(0n);
  expect(await paidTo(bitcoinKeys.faucet.address, conflict.id)).toBe(total - 100_000n);
  expect((await t.api.get(`/v0/transfers/${offramp.id}`)).body.state).toBe('awaiting_funds');
  expect((await t.api.get(`/v0/payments?transfer_id=${offramp.id}`)).body.data).toEqual([]);
}, 120_000);

test('a reorganisation of the last block puts a deposit under six blocks back to pending; mined again, it funds the transfer once', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const account = await verifiedUsAccount(t.api, us.id);
  const tr = (await t.api.post('/v0/transfers', {
    amount: '0.03', on_behalf_of: us.id, source: { payment_rail: 'bitcoin', currency: 'btc', from_address: outsideAddress() },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
  })).body;
  transferIds.push(tr.id);
  const depositAddress = tr.source_deposit_instructions.to_address;
  await sandboxDeposit(t.api, tr.id);
  const [last] = await mineBlocks(1);
  await waitFor(async () => (await paidTo(depositAddress)) === btc('0.03'), { what: 'the deposit in the index' });
  const { txid: depositTx } = await testDb().selectFrom('bitcoin_outputs').select('txid').where('address', '=', depositAddress).executeTakeFirstOrThrow();
  await bitcoinRpc().call('invalidateblock', [last]);
  expect(await bitcoinRpc().call<string[]>('getrawmempool')).toContain(depositTx);
  // Back in the mempool: the index unreads its block (the transfer's own watch reads the chain on).
  await waitFor(async () => (await paidTo(depositAddress)) === 0n, { what: 'the deposit unread with its block' });
  expect((await t.api.get(`/v0/transfers/${tr.id}`)).body.state).toBe('awaiting_funds');
  const done = await whileMining(waitForTransferState(t.api, tr.id, 'payment_processed', 90_000));
  expect(done.receipt.source_tx_hash).toBe(depositTx);
  expect((await t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=deposit`)).body.data).toHaveLength(1);
}, 120_000);

test('a payout to an address of another network is undeliverable: nothing is sent, the deposit is refunded', async () => {
  const us = await approvedCustomer(t.api, 'US');
  // A mainnet address: valid Bitcoin, but this node is regtest.
  const tr = (await t.api.post('/v0/transfers', {
    amount: '100.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' },
  })).body;
  await sandboxDeposit(t.api, tr.id);
  const refunded = await waitForTransferState(t.api, tr.id, 'refunded', 60_000);
  expect(refunded.state_reason).toBe('bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq is not an address on the bitcoin regtest network this platform pays on');
  const payout = await testDb().selectFrom('payments').select(['signed_transaction', 'tx_hash']).where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirst();
  expect(payout?.signed_transaction ?? null).toBeNull();
}, 90_000);

test('a liquidation address on bitcoin: a payment to it, six blocks deep, becomes a transfer paid out once to its destination', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const receiver = outsideAddress();
  const created = await t.api.post(`/v0/customers/${us.id}/liquidation_addresses`, {
    chain: 'bitcoin', currency: 'btc', destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: receiver },
  });
  expect([created.status, created.body.error]).toEqual([201, undefined]);
  const liq = created.body;
  expect(liq.address).toMatch(/^bcrt1q/);
  // The payment: the platform pays the address from an ACH onramp, a real transaction on the node.
  const onramp = (await t.api.post('/v0/transfers', {
    amount: '300.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: liq.address },
  })).body;
  await sandboxDeposit(t.api, onramp.id);
  const paid = await whileMining(waitForTransferState(t.api, onramp.id, 'payment_processed', 90_000));
  const drainsOf = async () => (await t.api.get(`/v0/customers/${us.id}/liquidation_addresses/${liq.id}/drains`)).body.data as any[];
  const drain = await whileMining(waitFor(async () => (await drainsOf()).find((d) => d.transfer_state === 'payment_processed'), {
    timeoutMs: 120_000, intervalMs: 500, what: 'the drain paid out',
  }));
  expect(drain).toMatchObject({ chain: 'bitcoin', currency: 'btc', amount: paid.receipt.final_amount, tx_hash: paid.receipt.destination_tx_hash, state: 'transferred' });
  expect(drain.confirmations).toBeGreaterThanOrEqual(6);
  const forwarded = (await t.api.get(`/v0/transfers/${drain.transfer_id}`)).body;
  transferIds.push(forwarded.id);
  expect(forwarded).toMatchObject({ route_id: liq.id, source: { payment_rail: 'bitcoin' } });
  expect(await paidTo(receiver)).toBe(btc(forwarded.receipt.final_amount));
  expect(await drainsOf()).toHaveLength(1);
}, 240_000);

test('the histories of these transfers and of bitcoin\'s wallet watcher replay against the current code', () => expectChainHistoriesReplay('bitcoin', transferIds), 150_000);
