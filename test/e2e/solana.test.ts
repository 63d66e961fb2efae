import { randomBytes } from 'node:crypto';
import { address, generateKeyPairSigner, getBase58Decoder, type KeyPairSigner } from '@solana/kit';
import { getFreezeAccountInstruction } from '@solana-program/token';
import { SolanaKeys } from '../../src/chains/solana/keys';
import { SolanaNode } from '../../src/chains/solana/node';
import { signInstructions, signTokenTransfer } from '../../src/chains/solana/transactions';
import { parseAmount } from '../../src/domain/money';
import { createTenant, stack, testDb, waitFor, type Tenant } from '../harness';
import { TEST_MNEMONIC } from '../harness/stack';
import { approvedCustomer, expectChainHistoriesReplay, expectLedgerBalanced, sandboxDeposit, verifiedUsAccount, waitForTransferState } from '../harness/transfers';

// Solana on its node (the sandbox's LiteSVM, over JSON-RPC through @solana/kit): USDC into a
// transfer's deposit address and out over ACH; ACH in and USDC out to an address without a token
// account; payouts the chain cannot take refunded. Real signatures, fees, rent and token accounts.

let t: Tenant;
let node: SolanaNode;
const keys = new SolanaKeys(TEST_MNEMONIC);
const usdcMint = keys.sandboxMint('usdc')!.address;
/** The transfers of this file, whose histories the last test replays. */
const transferIds: string[] = [];

beforeAll(async () => {
  t = await createTenant();
  node = new SolanaNode(stack().processEnv.SOLANA_RPC_URL!, 'confirmed');
});
afterEach(expectLedgerBalanced);

/** A customer's own wallet holding `amountMinor` of USDC (from the sandbox treasury's float) and SOL for its fees. */
async function customerWallet(amountMinor: bigint): Promise<KeyPairSigner> {
  const wallet = await generateKeyPairSigner();
  await node.airdrop(wallet.address, 1_000_000_000n);
  const treasury = await keys.treasury.signer();
  const funded = await signTokenTransfer(node, { feePayer: treasury, authority: treasury, mint: usdcMint, decimals: 6, to: wallet.address, amountMinor, memo: 'test funding' });
  await node.broadcast(funded.wire);
  return wallet;
}

async function usdcOf(owner: string): Promise<bigint | null> {
  const account = await node.tokenAccount(await node.associatedTokenAccount(address(owner), usdcMint));
  return account === null || account === 'invalid' ? null : account.amount;
}

test('USDC sent by the customer to a transfer\'s deposit address on solana is found, swept to the treasury, and paid out over ACH', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const account = await verifiedUsAccount(t.api, us.id);
  const wallet = await customerWallet(40_000_000n);
  const created = await t.api.post('/v0/transfers', {
    amount: '25.00', on_behalf_of: us.id, source: { payment_rail: 'solana', currency: 'usdc', from_address: wallet.address },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
  });
  expect(created.status).toBe(201);
  const instructions = created.body.source_deposit_instructions;
  expect(instructions).toMatchObject({ payment_rail: 'solana', currency: 'usdc', amount: '25.000000', to_address: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/) });
  // The customer's wallet sends it as wallets do: to the owner's associated token account, creating it.
  const sent = await signTokenTransfer(node, { feePayer: wallet, authority: wallet, mint: usdcMint, decimals: 6, to: address(instructions.to_address), amountMinor: 25_000_000n, memo: 'customer deposit' });
  await node.broadcast(sent.wire);
  transferIds.push(created.body.id);
  const done = await waitForTransferState(t.api, created.body.id, 'payment_processed', 60_000);
  expect(done.receipt.source_tx_hash).toBe(sent.signature);
  // Swept: the deposit's token account emptied into the treasury and closed (its rent back to the treasury).
  await waitFor(async () => (await usdcOf(instructions.to_address)) === null, { what: 'the deposit swept and its token account closed', timeoutMs: 30_000 });
  const sweep = await testDb().selectFrom('chain_sweeps').selectAll().where('transfer_id', '=', created.body.id).executeTakeFirstOrThrow();
  expect(sweep).toMatchObject({ chain: 'solana', status: 'swept', amount_minor: '25000000' });
  expect(await testDb().selectFrom('simulated_chain_transactions').select('hash').where('chain', '=', 'solana').execute()).toEqual([]);
}, 120_000);

test('ACH in, USDC out on solana to an address with no token account: the payout creates it, its rent counted in the network fee', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const receiver = await generateKeyPairSigner();
  const created = await t.api.post('/v0/transfers', {
    amount: '15.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'solana', currency: 'usdc', to_address: receiver.address },
  });
  expect(created.status).toBe(201);
  expect(Number(created.body.receipt.gas_fee)).toBeGreaterThan(0);
  expect(await usdcOf(receiver.address)).toBeNull();
  await sandboxDeposit(t.api, created.body.id);
  const done = await waitForTransferState(t.api, created.body.id, 'payment_processed', 60_000);
  expect(done.receipt.destination_tx_hash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  expect(await usdcOf(receiver.address)).toBe(parseAmount(done.receipt.final_amount, 6));
  const payout = (await t.api.get(`/v0/payments?transfer_id=${created.body.id}&kind=payout`)).body.data[0];
  const rent = await node.rpc.getMinimumBalanceForRentExemption(165n).send();
  // The signature's 5,000 lamports and the new token account's rent.
  expect(payout).toMatchObject({ payment_rail: 'solana', status: 'settled', tx_hash: done.receipt.destination_tx_hash, network_fee: `${5000n + rent} (smallest unit of sol)` });
  // What the reconciliation reads of it from the node: the receiver's token account credited the final amount; a signature the node never saw is none.
  const moved = await node.transactionMovements(done.receipt.destination_tx_hash);
  expect(moved!.filter((m) => m.deltaMinor > 0n).map((m) => [m.owner, m.mint, m.deltaMinor])).toEqual([[receiver.address, usdcMint, parseAmount(done.receipt.final_amount, 6)]]);
  expect(await node.transactionMovements(getBase58Decoder().decode(randomBytes(64)))).toBeNull();
}, 120_000);

test('a payout to a frozen token account is undeliverable: nothing is sent, the deposit is refunded; a mint, or a token account given as a wallet, is refused at creation', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const frozen = await generateKeyPairSigner();
  // The receiver's token account exists and the issuer froze it.
  const opened = await signTokenTransfer(node, { feePayer: await keys.treasury.signer(), authority: await keys.treasury.signer(), mint: usdcMint, decimals: 6, to: frozen.address, amountMinor: 1n, memo: 'test opening' });
  await node.broadcast(opened.wire);
  const freeze = await signInstructions(node, await keys.treasury.signer(), [
    getFreezeAccountInstruction({ account: await node.associatedTokenAccount(frozen.address, usdcMint), mint: usdcMint, owner: await keys.issuer.signer() }),
  ]);
  await node.broadcast(freeze.wire);
  const frozenAccount = await node.associatedTokenAccount(frozen.address, usdcMint);
  const payoutTo = (to: string) => t.api.post('/v0/transfers', {
    amount: '12.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'solana', currency: 'usdc', to_address: to },
  });
  // The mint itself is refused when the transfer is created: tokens sent to it would be lost.
  const toMint = await payoutTo(usdcMint);
  expect([toMint.status, toMint.body.error.source]).toEqual([400, { location: 'body', key: 'destination.to_address' }]);
  // Its token account given as if it were a wallet: an associated token account is off the ed25519
  // curve (a program-derived address), refused at creation too.
  const toTokenAccount = await payoutTo(frozenAccount);
  expect([toTokenAccount.status, toTokenAccount.body.error.source]).toEqual([400, { location: 'body', key: 'destination.to_address' }]);
  expect(toTokenAccount.body.error.message).toMatch(/off the ed25519 curve/);
  // The frozen owner: found at payout, refunded.
  {
    const to = frozen.address;
    const tr = (await payoutTo(to)).body;
    await sandboxDeposit(t.api, tr.id);
    const refunded = await waitForTransferState(t.api, tr.id, 'refunded', 60_000);
    expect(refunded.state_reason).toBe(`the usdc token account of ${to} on solana is frozen`);
    const payments = (await t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data;
    expect(payments.map((x: any) => [x.kind, x.status]).sort()).toEqual([['deposit', 'settled'], ['refund', 'settled']]);
  }
  expect(await usdcOf(frozen.address)).toBe(1n);
}, 180_000);

test('a custodial wallet on solana: funded, its balance and history read from the chain, a transfer from it signed by its own key', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const w = (await t.api.post('/v0/wallets', { customer_id: us.id, type: 'custodial', chains: ['solana'] })).body;
  expect(w.addresses.solana).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  expect(w.simulated_chains).toEqual([]);
  expect((await t.api.post(`/v0/sandbox/wallets/${w.id}/fund`, { chain: 'solana', currency: 'usdc', amount: '30' })).status).toBe(200);
  await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/balances`)).body.data.find((b: any) => b.currency === 'usdc' && b.balance === '30.000000' && b.pending === '0.000000'),
    { what: 'the funded balance', timeoutMs: 30_000 });
  const incoming = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.direction === 'incoming' && x.state === 'confirmed'),
    { what: 'the funding in the wallet\'s history', timeoutMs: 30_000 });
  expect(incoming).toMatchObject({ chain: 'solana', currency: 'usdc', amount: '30.000000' });

  const receiver = await generateKeyPairSigner();
  const res = await t.api.post('/v0/transfers', {
    amount: '12.00', on_behalf_of: us.id, source: { payment_rail: 'solana', currency: 'usdc', wallet_id: w.id },
    destination: { payment_rail: 'solana', currency: 'usdc', to_address: receiver.address },
  });
  expect(res.status).toBe(201);
  transferIds.push(res.body.id);
  const done = await waitForTransferState(t.api, res.body.id, 'payment_processed', 90_000);
  expect(await usdcOf(w.addresses.solana)).toBe(18_000_000n);
  expect(await usdcOf(receiver.address)).toBe(parseAmount(done.receipt.final_amount, 6));
  // The deposit's signers: the wallet's own key (the token's authority) and the treasury (its fee).
  const deposit = await node.rpc.getTransaction(done.receipt.source_tx_hash, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
  expect(deposit?.transaction.message.accountKeys).toEqual(expect.arrayContaining([w.addresses.solana, keys.treasury.address]));
  const leg = await waitFor(async () => (await t.api.get(`/v0/wallets/${w.id}/transactions`)).body.data.find((x: any) => x.direction === 'outgoing'),
    { what: 'the transfer\'s leg in the wallet\'s history', timeoutMs: 30_000 });
  expect(leg).toMatchObject({ amount: '12.000000', tx_hash: done.receipt.source_tx_hash, transfer_id: res.body.id });
}, 150_000);

test('a payout the cluster takes and then drops is signed again once its blockhash has expired: the receiver is paid once', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const receiver = (await generateKeyPairSigner()).address;
  // The node answers the first payout to this receiver with its signature, and never includes it (as a leader may).
  const rpc = await fetch(stack().processEnv.SOLANA_RPC_URL!, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sandbox_dropTransactionsTo', params: [receiver, 1] }),
  });
  expect((await rpc.json()).error).toBeUndefined();
  const tr = (await t.api.post('/v0/transfers', {
    amount: '14.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'solana', currency: 'usdc', to_address: receiver },
  })).body;
  transferIds.push(tr.id);
  await sandboxDeposit(t.api, tr.id);
  // The stack's node keeps a blockhash usable for 25 slots (10 s): then the payout is signed anew.
  const done = await waitForTransferState(t.api, tr.id, 'payment_processed', 90_000);
  const payout = await testDb().selectFrom('payments').select(['tx_hash', 'replaced_tx_hashes']).where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirstOrThrow();
  const dropped = payout.replaced_tx_hashes as string[];
  expect(dropped).toHaveLength(1);
  expect(payout.tx_hash).toBe(done.receipt.destination_tx_hash);
  expect(await node.signatureStatus(dropped[0]!)).toBeNull();
  expect(await usdcOf(receiver)).toBe(parseAmount(done.receipt.final_amount, 6));
}, 120_000);

test('the histories of these transfers and of solana\'s wallet watcher replay against the current code', () => expectChainHistoriesReplay('solana', transferIds), 150_000);
