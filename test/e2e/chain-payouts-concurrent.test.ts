import { address, generateKeyPairSigner } from '@solana/kit';
import { SolanaKeys } from '../../src/chains/solana/keys';
import { SolanaNode } from '../../src/chains/solana/node';
import { parseAmount } from '../../src/domain/money';
import { createTenant, stack, testDb, type Tenant } from '../harness';
import { outsideAddress, whileMining } from '../harness/bitcoin';
import { TEST_MNEMONIC } from '../harness/stack';
import { approvedCustomer, expectLedgerBalanced, freshReceiver, sandboxDeposit, tokenBalance, waitForTransferState } from '../harness/transfers';
import { expectAllProcessed, fundedWallet, thirtyFromWallet } from '../harness/concurrent';

// Money paths under concurrent use, on every chain (docs/WALLETS.md, "One transaction, one payment"):
// identical payouts created at once are each their own transaction and each paid; concurrent
// transfers from one wallet are accepted exactly as far as it can fund them, and all of those settle;
// a bitcoin wallet funded by one coin is test/e2e-alone/bitcoin-wallet-chained-sends.test.ts (it mines alone).

let t: Tenant;
let us: { id: string };
const solanaKeys = new SolanaKeys(TEST_MNEMONIC);

beforeAll(async () => {
  t = await createTenant({ rateLimitPerSecond: 1000 });
  us = await approvedCustomer(t.api, 'US');
});
afterEach(expectLedgerBalanced);

/** `n` identical ACH-funded payouts to `destination`, created and funded at once; answers them once processed. */
async function identicalPayouts(n: number, amount: string, destination: Record<string, unknown>, wait: (p: Promise<any[]>) => Promise<any[]> = (p) => p) {
  const created = await Promise.all(Array.from({ length: n }, () => t.api.post('/v0/transfers', {
    amount, on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' }, destination,
  })));
  expect(created.map((r) => [r.status, r.body.error])).toEqual(created.map(() => [201, undefined]));
  await Promise.all(created.map((r) => sandboxDeposit(t.api, r.body.id)));
  return wait(Promise.all(created.map((r) => waitForTransferState(t.api, r.body.id, 'payment_processed', 240_000))));
}

const sumOf = (transfers: any[], scale: number) => transfers.reduce((s, x) => s + parseAmount(x.receipt.final_amount, scale)!, 0n);

test('20 identical ACH → USDC payouts on solana, created at once: 20 distinct signatures, and the payee holds the sum of the receipts', async () => {
  const payee = await generateKeyPairSigner();
  const done = await identicalPayouts(20, '10.00', { payment_rail: 'solana', currency: 'usdc', to_address: payee.address });
  expect(new Set(done.map((x) => x.receipt.destination_tx_hash)).size).toBe(20);
  const node = new SolanaNode(stack().processEnv.SOLANA_RPC_URL!, 'confirmed');
  const account = await node.tokenAccount(await node.associatedTokenAccount(address(payee.address), solanaKeys.sandboxMint('usdc')!.address));
  expect(account !== null && account !== 'invalid' ? account.amount : null).toBe(sumOf(done, 6));
}, 300_000);

test('20 identical ACH → USDC payouts on base, created at once: 20 distinct transactions, and the payee holds the sum of the receipts', async () => {
  const payee = freshReceiver();
  const done = await identicalPayouts(20, '10.00', { payment_rail: 'base', currency: 'usdc', to_address: payee });
  expect(new Set(done.map((x) => x.receipt.destination_tx_hash)).size).toBe(20);
  expect(await tokenBalance('base', 'usdc', payee)).toBe(sumOf(done, 6));
}, 300_000);

test('20 identical ACH → BTC payouts, created at once: 20 distinct transactions, and the payee holds the sum of the receipts', async () => {
  const payee = outsideAddress();
  const done = await identicalPayouts(20, '100.00', { payment_rail: 'bitcoin', currency: 'btc', to_address: payee }, whileMining);
  expect(new Set(done.map((x) => x.receipt.destination_tx_hash)).size).toBe(20);
  const paid = await testDb().selectFrom('bitcoin_outputs').select('amount_sats').where('address', '=', payee).execute();
  expect(paid.reduce((s, r) => s + BigInt(r.amount_sats), 0n)).toBe(sumOf(done, 8));
}, 300_000);

test('30 concurrent transfers of a tenth of a solana wallet\'s USDC: exactly 10 accepted, the rest refused (409), all 10 paid', async () => {
  const w = await fundedWallet(t, us, 'solana', 'usdc', '100', 6);
  const payee = await generateKeyPairSigner();
  const results = await thirtyFromWallet(t, us, w, 'solana', 'usdc', '10.00', payee.address);
  const accepted = results.filter((r) => r.status === 201);
  expect(accepted).toHaveLength(10);
  for (const r of results.filter((x) => x.status !== 201)) expect([r.status, r.body.error.source.key]).toEqual([409, 'source.wallet_id']);
  await expectAllProcessed(t, accepted.map((r) => r.body.id));
}, 300_000);

test('30 concurrent transfers of a tenth of a base wallet\'s USDC: exactly 10 accepted, all 10 paid, none left waiting', async () => {
  const w = await fundedWallet(t, us, 'base', 'usdc', '100', 6);
  const results = await thirtyFromWallet(t, us, w, 'base', 'usdc', '10.00', freshReceiver());
  const accepted = results.filter((r) => r.status === 201);
  expect(accepted).toHaveLength(10);
  for (const r of results.filter((x) => x.status !== 201)) expect([r.status, r.body.error.source.key]).toEqual([409, 'source.wallet_id']);
  await expectAllProcessed(t, accepted.map((r) => r.body.id));
  expect(await tokenBalance('base', 'usdc', w.addresses.base)).toBe(0n);
}, 300_000);

