import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createPublicClient, createTestClient, getAddress, http, parseAbiItem, parseTransaction, type Hex } from 'viem';
import { encodeChainAddress } from '../../src/domain/bank-validation';
import { sandboxTokenAddress } from '../../src/chains/evm';
import { createChainAdapters } from '../../src/chains';
import { findDeposit } from '../../src/chains/chain-adapter';
import { generateKeyPairSigner } from '@solana/kit';
import { SolanaKeys } from '../../src/chains/solana/keys';
import { SolanaNode } from '../../src/chains/solana/node';
import { outsideAddress, whileMining } from '../harness/bitcoin';
import { parseAmount } from '../../src/domain/money';
import { apiClient, createTenant, stack, temporalClient, testDb, waitFor, type ApiClient, type Tenant } from '../harness';
import { signSandboxWebhook } from '../../src/providers/rails';
import { freePort, startProcess, stopProcess, TEST_MNEMONIC, waitForPoller, waitUntilReady } from '../harness/stack';
import {
  approvedCustomer, chainKeys, chainUrl, expectLedgerBalanced, fundedCustomerWallet, internationalAccount, tokenBalance, verifiedUsAccount, sandboxDeposit, waitForTransferState,
} from '../harness/transfers';

// Regional rails, FX, the simulated chains, and a worker killed right after a payout or a return went out,
// or down when a deposit arrives.

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});
afterEach(expectLedgerBalanced);

async function depositAndSettle(id: string) {
  await sandboxDeposit(t.api, id);
  return waitForTransferState(t.api, id, 'payment_processed');
}

test('sepa (EUR in a German account) and an FX onramp EUR → USDC on base', async () => {
  const de = await approvedCustomer(t.api, 'DE');
  expect(de.endorsements).toContain('can_sepa_transfer');
  const iban = await internationalAccount(t.api, de.id, 'DE89370400440532013000', 'COBADEFFXXX', 'DE');
  const sepa = (await t.api.post('/v0/transfers', {
    amount: '120.00', on_behalf_of: de.id, source: { payment_rail: 'sepa', currency: 'EUR' },
    destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: iban.id },
  })).body;
  expect(sepa.source_deposit_instructions).toMatchObject({ payment_rail: 'sepa', currency: 'eur', iban: expect.stringMatching(/^DE/), bic: expect.any(String) });
  expect((await depositAndSettle(sepa.id)).receipt.final_amount).toBe('120.00');

  const receiver = chainKeys.account(7).address;
  const before = await tokenBalance('base', 'usdc', receiver);
  const fx = (await t.api.post('/v0/transfers', {
    amount: '100.00', on_behalf_of: de.id, source: { payment_rail: 'sepa', currency: 'eur' },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: receiver },
  })).body;
  // 50 bp across currencies, rounded up; 1.08 USDC per EUR, rounded down; gas deducted.
  expect(fx.receipt).toMatchObject({ initial_amount: '100.00', exchange_fee: '0.50', subtotal_amount: '99.50', exchange_rate: '1.08' });
  const gas = BigInt(Math.round(Number(fx.receipt.gas_fee) * 1e6));
  expect(BigInt(Math.round(Number(fx.receipt.final_amount) * 1e6))).toBe(107_460_000n - gas);
  await depositAndSettle(fx.id);
  expect(await tokenBalance('base', 'usdc', receiver) - before).toBe(107_460_000n - gas);
  // The conversion balances per currency through the FX accounts.
  const fxLegs = await testDb().selectFrom('ledger_entries').innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_entries.account_id')
    .innerJoin('ledger_transactions', 'ledger_transactions.id', 'ledger_entries.transaction_id')
    .select(['ledger_entries.currency', 'ledger_entries.amount_minor']).where('ledger_transactions.reference_id', '=', fx.id)
    .where('ledger_accounts.purpose', '=', 'fx_conversion').execute();
  expect(fxLegs.map((l) => [l.currency, l.amount_minor]).sort()).toEqual([['eur', '9950'], ['usdc', '-107460000']]);
});

test('faster_payments, pix, spei and swift pay out in their currencies', async () => {
  const gb = await approvedCustomer(t.api, 'GB');
  const gbAccount = await internationalAccount(t.api, gb.id, 'GB29NWBK60161331926819', 'NWBKGB2L', 'GB', 'Olivia Bennett');
  const fps = (await t.api.post('/v0/transfers', {
    amount: '75.00', on_behalf_of: gb.id, source: { payment_rail: 'faster_payments', currency: 'gbp' },
    destination: { payment_rail: 'faster_payments', currency: 'gbp', external_account_id: gbAccount.id },
  })).body;
  expect(fps.source_deposit_instructions).toMatchObject({ sort_code: expect.any(String), account_number: expect.any(String) });
  await depositAndSettle(fps.id);

  const br = await approvedCustomer(t.api, 'BR');
  const brAccount = await internationalAccount(t.api, br.id, 'BR1800360305000010009795493C1', 'BRASBRRJ', 'BR', 'Maria Silva');
  const pix = (await t.api.post('/v0/transfers', {
    amount: '500.00', on_behalf_of: br.id, source: { payment_rail: 'pix', currency: 'brl' },
    destination: { payment_rail: 'pix', currency: 'brl', external_account_id: brAccount.id },
  })).body;
  expect(pix.source_deposit_instructions.pix_key).toBeDefined();
  await depositAndSettle(pix.id);

  const mx = await approvedCustomer(t.api, 'MX');
  const clabe = (await t.api.post('/v0/external-accounts', { customer_id: mx.id, type: 'mx_bank_account', account_name: 'Juan Pérez', clabe: '002010077777777771' })).body;
  const spei = (await t.api.post('/v0/transfers', {
    amount: '1500.00', on_behalf_of: mx.id, source: { payment_rail: 'spei', currency: 'mxn' },
    destination: { payment_rail: 'spei', currency: 'mxn', external_account_id: clabe.id },
  })).body;
  expect(spei.source_deposit_instructions.clabe).toMatch(/^\d{18}$/);
  await depositAndSettle(spei.id);
  // SPEI pays CLABEs only; an IBAN is refused, naming the field.
  const mxIban = await internationalAccount(t.api, mx.id, 'DE89370400440532013000', 'COBADEFFXXX', 'DE');
  const wrong = await t.api.post('/v0/transfers', {
    amount: '10.00', on_behalf_of: mx.id, source: { payment_rail: 'spei', currency: 'mxn' },
    destination: { payment_rail: 'spei', currency: 'mxn', external_account_id: mxIban.id },
  });
  expect(wrong.status).toBe(400);
  expect(wrong.body.error).toMatchObject({ source: { key: 'destination.external_account_id' }, message: expect.stringMatching(/spei pays a mx_bank_account/) });
  // Faster Payments reaches UK accounts only.
  const fpsAbroad = await t.api.post('/v0/transfers', {
    amount: '10.00', on_behalf_of: gb.id, source: { payment_rail: 'faster_payments', currency: 'gbp' },
    destination: { payment_rail: 'faster_payments', currency: 'gbp', external_account_id: (await internationalAccount(t.api, gb.id, 'DE89370400440532013000', 'COBADEFFXXX', 'DE')).id },
  });
  expect(fpsAbroad.status).toBe(400);

  const us = await approvedCustomer(t.api, 'US');
  const abroad = await internationalAccount(t.api, us.id, 'DE89370400440532013000', 'COBADEFFXXX', 'DE');
  const swift = (await t.api.post('/v0/transfers', {
    amount: '2000.00', on_behalf_of: us.id, source: { payment_rail: 'ach_same_day', currency: 'usd' },
    destination: { payment_rail: 'swift', currency: 'usd', external_account_id: abroad.id, swift_charges: 'our' },
  })).body;
  expect(swift.destination).toMatchObject({ payment_rail: 'swift', swift_charges: 'our' });
  await depositAndSettle(swift.id);
  for (const id of [fps.id, pix.id, spei.id, swift.id]) {
    const payout = (await t.api.get(`/v0/payments?transfer_id=${id}&kind=payout`)).body.data[0];
    expect(payout.status).toBe('settled');
    // Sent once, and known to the provider: also a payout that settled as it was sent (pix here).
    expect(payout.attempts).toBe(1);
    const stored = await testDb().selectFrom('payments').select(['provider_payment_id', 'settles_at']).where('id', '=', payout.id).executeTakeFirstOrThrow();
    expect(stored.provider_payment_id).toMatch(/\S/);
    expect(stored.settles_at).toBeInstanceOf(Date);
  }
}, 120_000);

test('swift_charges decides who pays the SWIFT fees: in the receipt, in the payout sent, in the ledger', async () => {
  const us = await approvedCustomer(t.api, 'US');
  const abroad = await internationalAccount(t.api, us.id, 'DE89370400440532013000', 'COBADEFFXXX', 'DE');
  const swift = async (charges?: string) => (await t.api.post('/v0/transfers', {
    amount: '1000.00', on_behalf_of: us.id, source: { payment_rail: 'ach_same_day', currency: 'usd' },
    destination: { payment_rail: 'swift', currency: 'usd', external_account_id: abroad.id, ...(charges ? { swift_charges: charges } : {}) },
  })).body;
  // ach_same_day → swift in usd: no exchange fee; the sender's part of the SWIFT fees comes off what is sent.
  const receipts = Object.fromEntries(await Promise.all(['sha', 'our', 'ben'].map(async (c) => [c, (await swift(c)).receipt])));
  expect(receipts.sha).toMatchObject({ swift_fee: '15.00', beneficiary_deductions: '25.00', final_amount: '985.00' });
  expect(receipts.our).toMatchObject({ swift_fee: '40.00', beneficiary_deductions: '0.00', final_amount: '960.00' });
  expect(receipts.ben).toMatchObject({ swift_fee: '0.00', beneficiary_deductions: '40.00', final_amount: '1000.00' });
  const byDefault = await swift();
  expect([byDefault.destination.swift_charges, byDefault.receipt.swift_fee]).toEqual(['sha', '15.00']);
  // Too small to arrive once the banks on the way took theirs.
  const tooSmall = await t.api.post('/v0/transfers', {
    amount: '30.00', on_behalf_of: us.id, source: { payment_rail: 'ach_same_day', currency: 'usd' },
    destination: { payment_rail: 'swift', currency: 'usd', external_account_id: abroad.id, swift_charges: 'ben' },
  });
  expect([tooSmall.status, tooSmall.body.error.source]).toEqual([400, { location: 'body', key: 'amount' }]);
  // Paid out: the payout is the final amount; the platform's SWIFT fee is in the ledger (checked after the test).
  await depositAndSettle(byDefault.id);
  const payout = (await t.api.get(`/v0/payments?transfer_id=${byDefault.id}&kind=payout`)).body.data[0];
  expect([payout.status, payout.amount]).toEqual(['settled', '985.00']);
  // Other rails have neither field.
  expect((await t.api.post('/v0/transfers', {
    amount: '10.00', on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: 'wire', currency: 'usd', external_account_id: (await verifiedUsAccount(t.api, us.id)).id },
  })).body.receipt).not.toHaveProperty('swift_fee');
}, 120_000);

test('USDC from solana (its node) to a stellar address, USDT out on tron (the simulated chains)', async () => {
  const customer = await approvedCustomer(t.api, 'DE');
  const solanaWallet = encodeChainAddress('solana', randomBytes(32));
  const stellarAddress = encodeChainAddress('stellar', randomBytes(32));
  const tronAddress = encodeChainAddress('tron', randomBytes(20));
  const toStellar = (await t.api.post('/v0/transfers', {
    amount: '50.000000', on_behalf_of: customer.id, source: { payment_rail: 'solana', currency: 'usdc', from_address: solanaWallet },
    destination: { payment_rail: 'stellar', currency: 'usdc', to_address: stellarAddress },
  })).body;
  expect(toStellar.source_deposit_instructions.to_address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  const done = await depositAndSettle(toStellar.id);
  expect(done.receipt.source_tx_hash).toBeTruthy();
  expect(done.receipt.destination_tx_hash).toMatch(/^[0-9a-f]{64}$/);
  const rows = await testDb().selectFrom('simulated_chain_transactions').selectAll().where('to_address', '=', stellarAddress).execute();
  expect(rows).toHaveLength(1);
  const toTron = (await t.api.post('/v0/transfers', {
    amount: '25.00', on_behalf_of: customer.id, source: { payment_rail: 'sepa', currency: 'eur' },
    destination: { payment_rail: 'tron', currency: 'usdt', to_address: tronAddress },
  })).body;
  await depositAndSettle(toTron.id);
});

test('deposits on an EVM chain are looked for a bounded block range at a time, resuming where the last look stopped', async () => {
  const chain = 'optimism';
  const adapter = evmAdapter(chain, { EVM_LOG_BLOCK_RANGE: 3 });
  const node = createTestClient({ mode: 'anvil', transport: http(chainUrl(chain)) });
  const address = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const start = await adapter.currentPosition();
  await node.mine({ blocks: 10 });
  const wallet = await fundedCustomerWallet(chain, 'usdc', 8_000_000n, 6);
  await wallet.send(address, 1_000_000n); // not the quoted amount: left alone
  const txHash = await wallet.send(address, 7_000_000n);
  await node.mine({ blocks: 5 });

  const looks: { from: bigint; next: bigint; caughtUp: boolean }[] = [];
  let position = start;
  for (;;) {
    const scan = await findDeposit(adapter, { currency: 'usdc', address, fromPosition: position, amountMinor: 7_000_000n });
    looks.push({ from: BigInt(position), next: BigInt(scan.nextPosition), caughtUp: scan.caughtUp });
    if (scan.deposit) {
      expect(scan.deposit).toMatchObject({ txHash, amountMinor: 7_000_000n });
      expect(scan.deposit.confirmations).toBeGreaterThanOrEqual(2);
      break;
    }
    expect(scan.caughtUp).toBe(false);
    position = scan.nextPosition;
  }
  // Over ten blocks to read, three at most per look, each look starting where the last one ended.
  expect(looks.length).toBeGreaterThanOrEqual(4);
  for (const [i, look] of looks.entries()) {
    expect(look.next - look.from).toBeLessThanOrEqual(3n);
    if (i > 0) expect(look.from).toBe(looks[i - 1]!.next);
  }
});

test('an EVM payout whose fee cap falls under the base fee is replaced (same nonce, higher fee) and paid once', async () => {
  const chain = 'arbitrum';
  const node = createTestClient({ mode: 'anvil', transport: http(chainUrl(chain)) });
  const reader = createPublicClient({ transport: http(chainUrl(chain)), cacheTime: 0 });
  const customer = await approvedCustomer(t.api, 'US');
  const receiver = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const payoutRow = (id: string) => testDb().selectFrom('payments').select(['tx_hash', 'signed_transaction', 'replaced_tx_hashes'])
    .where('transfer_id', '=', id).where('kind', '=', 'payout').executeTakeFirst();
  let transferId: string;
  let first: Hex;
  let firstNonce: number | undefined;
  await node.setIntervalMining({ interval: 0 }); // no blocks: the payout waits in the node's pool
  try {
    transferId = (await t.api.post('/v0/transfers', {
      amount: '20.00', on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: chain, currency: 'usdc', to_address: receiver },
    })).body.id;
    await sandboxDeposit(t.api, transferId);
    const sent = await waitFor(async () => (await payoutRow(transferId))?.signed_transaction ?? undefined, { what: 'the payout signed and sent' });
    first = (await payoutRow(transferId))!.tx_hash as Hex;
    firstNonce = parseTransaction(sent as Hex).nonce;
    // Fees jump past what the payout offers: the next block leaves it out.
    await node.setNextBlockBaseFeePerGas({ baseFeePerGas: parseTransaction(sent as Hex).maxFeePerGas! * 10n });
    await node.mine({ blocks: 1 });
  } finally {
    await node.setIntervalMining({ interval: 1 });
  }
  const done = await waitForTransferState(t.api, transferId, 'payment_processed');
  const payout = (await payoutRow(transferId))!;
  expect(payout.replaced_tx_hashes).toEqual([first]);
  expect(payout.tx_hash).not.toBe(first);
  expect(done.receipt.destination_tx_hash).toBe(payout.tx_hash);
  const listed = await t.api.get(`/v0/payments?transfer_id=${transferId}&kind=payout`);
  expect(listed.body.data).toHaveLength(1);
  expect(listed.body.data[0]).toMatchObject({ tx_hash: payout.tx_hash, replaced_tx_hashes: [first], status: 'settled' });
  // The same nonce at a higher fee: the mined replacement, and the first transaction never mined.
  const replacement = parseTransaction(payout.signed_transaction as Hex);
  expect(replacement.nonce).toBe(firstNonce);
  expect((await reader.getTransaction({ hash: payout.tx_hash as Hex })).nonce).toBe(firstNonce);
  expect(await reader.getTransactionReceipt({ hash: first }).catch(() => null)).toBeNull();
  // Paid once: the receiver holds exactly the final amount.
  expect(await tokenBalance(chain, 'usdc', receiver)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));
  await expectLedgerBalanced();
});

test('with finalized deposits (the default off this machine) a deposit counts once the node has finalized its block', async () => {
  const chain = 'optimism';
  const adapter = evmAdapter(chain, { EVM_DEPOSIT_FINALITY: 'finalized' });
  const node = createTestClient({ mode: 'anvil', transport: http(chainUrl(chain)) });
  const address = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const start = await adapter.currentPosition();
  const wallet = await fundedCustomerWallet(chain, 'usdc', 3_000_000n, 6);
  const txHash = await wallet.send(address, 3_000_000n);
  await node.mine({ blocks: 10 }); // ten confirmations: enough for EVM_CONFIRMATIONS, not for finality
  const early = await findDeposit(adapter, { currency: 'usdc', address, fromPosition: start, amountMinor: 3_000_000n });
  expect(early.deposit).toBeNull();
  expect(await findDeposit(evmAdapter(chain), { currency: 'usdc', address, fromPosition: start, amountMinor: 3_000_000n }))
    .toMatchObject({ deposit: { txHash } });
  await node.mine({ blocks: 64 }); // anvil finalizes 64 blocks behind its head
  const final = await findDeposit(adapter, { currency: 'usdc', address, fromPosition: early.nextPosition, amountMinor: 3_000_000n });
  expect(final.deposit).toMatchObject({ txHash, amountMinor: 3_000_000n });
});

test('a token contract is used only when it counts in the asset\'s scale, on a node of its own chain; remote chains need theirs configured', async () => {
  const chain = 'ethereum';
  const usdc = sandboxTokenAddress(chainKeys, chain, 'usdc');
  const dai = sandboxTokenAddress(chainKeys, chain, 'dai');
  // On a local node the project's sandbox contracts; a configured address takes their place.
  await expect(evmAdapter(chain).checkCurrency('dai')).resolves.toBeUndefined();
  await expect(evmAdapter(chain, { EVM_TOKEN_ADDRESSES: { ethereum: { usdc } } }).checkCurrency('usdc')).resolves.toBeUndefined();
  // DAI's contract (18 decimals) given as USDC's (6): refused before any amount is read or sent.
  const swapped = evmAdapter(chain, { EVM_TOKEN_ADDRESSES: { ethereum: { usdc: dai } } });
  await expect(swapped.checkCurrency('usdc')).rejects.toMatchObject({
    name: 'ChainUnavailableError', message: `The usdc contract at ${dai} on ethereum has 18 decimals; usdc amounts have 6`,
  });
  await expect(swapped.findTransfersTo({ currency: 'usdc', addresses: [chainKeys.account(7).address], fromPosition: '0' }))
    .rejects.toMatchObject({ name: 'ChainUnavailableError' });
  const nowhere = getAddress(`0x${randomBytes(20).toString('hex')}`);
  await expect(evmAdapter(chain, { EVM_TOKEN_ADDRESSES: { ethereum: { usdc: nowhere } } }).checkCurrency('usdc')).rejects.toMatchObject({
    name: 'ChainUnavailableError', message: `There is no usdc token contract at ${nowhere} on ethereum`,
  });
  // A swapped RPC address: the optimism node given for ethereum.
  const swappedNode = createChainAdapters({
    EVM_RPC_URLS: { ethereum: chainUrl('optimism') }, EVM_TOKEN_ADDRESSES: {}, CHAIN_TREASURY_MNEMONIC: TEST_MNEMONIC, EVM_CONFIRMATIONS: 2, EVM_LOG_BLOCK_RANGE: 2000,
  }, testDb()).ethereum;
  await expect(swappedNode.checkCurrency('usdc')).rejects.toMatchObject({
    name: 'ChainUnavailableError', message: 'The ethereum node (EVM_RPC_URLS) reports chain id 31340, which is optimism\'s',
  });
  // A node that is not on this machine has no sandbox contracts: without a configured address the currency is unavailable.
  const remote = createChainAdapters({
    EVM_RPC_URLS: { base: 'https://base.invalid' }, EVM_TOKEN_ADDRESSES: {}, CHAIN_TREASURY_MNEMONIC: TEST_MNEMONIC, EVM_CONFIRMATIONS: 2, EVM_LOG_BLOCK_RANGE: 2000,
  }, testDb()).base;
  await expect(remote.checkCurrency('usdt')).rejects.toMatchObject({
    name: 'ChainUnavailableError', message: 'No usdt token contract is configured for base (EVM_TOKEN_ADDRESSES)',
  });
});

/** The adapter of one local chain, as the worker builds it, with settings changed for a test. */
test('a deposit is swept into the treasury once, however many sweeps run at the same time (as after a crash)', async () => {
  const chain = 'optimism';
  const customer = await approvedCustomer(t.api, 'US');
  const account = await verifiedUsAccount(t.api, customer.id);
  const tr = (await t.api.post('/v0/transfers', {
    amount: '42.00', on_behalf_of: customer.id, source: { payment_rail: chain, currency: 'usdc', from_address: chainKeys.account(8).address },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
  })).body;
  const depositAddress = getAddress(tr.source_deposit_instructions.to_address);
  await sandboxDeposit(t.api, tr.id);
  // Four more sweepers beside the workflow's own, each going until it is done, as retried or
  // duplicated activities would.
  const row = await testDb().selectFrom('transfers').select('deposit_index').where('id', '=', tr.id).executeTakeFirstOrThrow();
  const adapter = evmAdapter(chain);
  const sweepUntilDone = async () => {
    for (;;) {
      const s = await adapter.sweepDeposit({ sweepKey: tr.id, transferId: tr.id, depositIndex: Number(row.deposit_index), currency: 'usdc', amountMinor: 42_000_000n });
      if (s.status === 'swept') return s.txHash;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const hashes = await Promise.all([sweepUntilDone(), sweepUntilDone(), sweepUntilDone(), sweepUntilDone()]);
  expect(new Set(hashes).size).toBe(1);
  await waitForTransferState(t.api, tr.id, 'payment_processed');
  const node = createPublicClient({ transport: http(chainUrl(chain)), cacheTime: 0 });
  // One transaction ever sent from the deposit address, carrying the deposit to the treasury.
  expect(await node.getTransactionCount({ address: depositAddress })).toBe(1);
  const out = await node.getLogs({
    address: sandboxTokenAddress(chainKeys, chain, 'usdc'), event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
    args: { from: depositAddress }, fromBlock: 0n,
  });
  expect(out.map((l) => [l.args.to, l.args.value, l.transactionHash])).toEqual([[chainKeys.treasury.address, 42_000_000n, hashes[0]]]);
  expect(await tokenBalance(chain, 'usdc', depositAddress)).toBe(0n);
});

function evmAdapter(chain: 'ethereum' | 'optimism', overrides: {
  EVM_TOKEN_ADDRESSES?: Record<string, Record<string, `0x${string}`>>; EVM_LOG_BLOCK_RANGE?: number; EVM_DEPOSIT_FINALITY?: 'finalized' | 'confirmations';
} = {}) {
  return createChainAdapters({
    EVM_RPC_URLS: { [chain]: chainUrl(chain) }, EVM_TOKEN_ADDRESSES: {}, CHAIN_TREASURY_MNEMONIC: TEST_MNEMONIC, EVM_CONFIRMATIONS: 2,
    EVM_LOG_BLOCK_RANGE: 2000, ...overrides,
  }, testDb())[chain];
}

describe('a worker killed right after a payout or a return went out, or down when a deposit arrives', () => {
  let api: ChildProcess;
  let worker: ChildProcess | undefined;
  let crashApi: ApiClient;
  let customerId: string;
  let accountId: string;
  const root = path.join(__dirname, '../..');
  // Requests a workflow answers wait 4 s for it here instead of the default 10 s: the no-worker tests answer sooner.
  const env = () => ({ ...stack().processEnv, TEMPORAL_TASK_QUEUE: `transfer-crash-${process.pid}`, WORKFLOW_ANSWER_TIMEOUT_SECONDS: '4' });
  const startWorker = () => startProcess('worker-transfer-crash', path.join(root, 'workers/main.ts'), env(), stack().logDir);

  beforeAll(async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    crashApi = apiClient(t.secret, url);
    api = startProcess('api-transfer-crash', path.join(root, 'src/main/api.ts'), { ...env(), PORT: String(port) }, stack().logDir);
    await waitUntilReady(`${url}/readyz`, api, 60_000);
    worker = startWorker();
    await waitForPoller(stack().temporalAddress, env().TEMPORAL_TASK_QUEUE, worker, 60_000);
    const c = await approvedCustomer(t.api, 'US');
    customerId = c.id;
    accountId = (await verifiedUsAccount(t.api, customerId)).id;
  }, 120_000);
  afterAll(async () => {
    await Promise.all([api, worker].filter((p): p is ChildProcess => Boolean(p)).map(stopProcess));
  });

  /** An ACH-in, ACH-out transfer created through this block's API (its workflows on this block's worker). */
  async function achToAchThroughCrashApi(amount: string) {
    return (await crashApi.post('/v0/transfers', {
      amount, on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: 'ach', currency: 'usd', external_account_id: accountId },
    })).body;
  }

  /** Sends a request again while it answers 503 (the worker still starting), as a client or provider would. */
  async function untilAnswered(send: () => Promise<{ status: number; body: any }>) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await send();
      if (res.status !== 503 || Date.now() > deadline) return res;
    }
  }

  async function killRightAfter(submitted: () => Promise<boolean>) {
    const deadline = Date.now() + 60_000;
    while (!(await submitted()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    // Undefined when an earlier test failed before it started the worker again.
    worker?.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    worker = startWorker();
  }

  test('EVM payout: the signed transaction is re-sent, never a second one; the transfer finishes', async () => {
    const receiver = chainKeys.account(8).address;
    const tr = (await crashApi.post('/v0/transfers', {
      amount: '42.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: 'arbitrum', currency: 'usdc', to_address: receiver },
    })).body;
    const fromBlock = await createPublicClient({ transport: http(chainUrl('arbitrum')) }).getBlockNumber();
    await sandboxDeposit(crashApi, tr.id);
    await killRightAfter(async () => Boolean((await testDb().selectFrom('payments').select('tx_hash').where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirst())?.tx_hash));
    const done = await waitForTransferState(t.api, tr.id, 'payment_processed', 90_000);
    const logs = await createPublicClient({ transport: http(chainUrl('arbitrum')) }).getLogs({
      address: sandboxTokenAddress(chainKeys, 'arbitrum', 'usdc'), event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
      args: { to: receiver }, fromBlock,
    });
    expect(logs).toHaveLength(1);
    expect(logs[0].transactionHash).toBe(done.receipt.destination_tx_hash);
  }, 120_000);

  test('Solana payout: the stored transaction is re-sent, never a second one; the transfer finishes', async () => {
    const receiver = (await generateKeyPairSigner()).address;
    const node = new SolanaNode(stack().processEnv.SOLANA_RPC_URL!, 'confirmed');
    const mint = new SolanaKeys(TEST_MNEMONIC).sandboxMint('usdc')!.address;
    const tr = (await crashApi.post('/v0/transfers', {
      amount: '41.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: 'solana', currency: 'usdc', to_address: receiver },
    })).body;
    await sandboxDeposit(crashApi, tr.id);
    await killRightAfter(async () => Boolean((await testDb().selectFrom('payments').select('tx_hash').where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirst())?.tx_hash));
    const done = await waitForTransferState(t.api, tr.id, 'payment_processed', 90_000);
    // One transfer of the final amount: a second signature would have paid it twice.
    const account = await node.tokenAccount(await node.associatedTokenAccount(receiver, mint));
    expect(account !== null && account !== 'invalid' && account.amount).toBe(parseAmount(done.receipt.final_amount, 6));
    const payout = await testDb().selectFrom('payments').select(['tx_hash', 'replaced_tx_hashes']).where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirstOrThrow();
    expect(payout.tx_hash).toBe(done.receipt.destination_tx_hash);
  }, 120_000);

  test('Bitcoin payout: the stored transaction is re-sent, never a second spend; the transfer finishes', async () => {
    const receiver = outsideAddress();
    const tr = (await crashApi.post('/v0/transfers', {
      amount: '44.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: 'bitcoin', currency: 'btc', to_address: receiver },
    })).body;
    await sandboxDeposit(crashApi, tr.id);
    await killRightAfter(async () => Boolean((await testDb().selectFrom('payments').select('tx_hash').where('transfer_id', '=', tr.id).where('kind', '=', 'payout').executeTakeFirst())?.tx_hash));
    const done = await whileMining(waitForTransferState(t.api, tr.id, 'payment_processed', 90_000));
    // One output to the receiver, in the transaction the payment names: a second signing would have spent other coins to it.
    const paid = await testDb().selectFrom('bitcoin_outputs').select(['txid', 'amount_sats']).where('address', '=', receiver).execute();
    expect(paid).toEqual([{ txid: done.receipt.destination_tx_hash, amount_sats: parseAmount(done.receipt.final_amount, 8)!.toString() }]);
  }, 120_000);

  test('fiat payout: exactly one payment on the rail after the restart', async () => {
    const tr = await achToAchThroughCrashApi('43.00');
    await sandboxDeposit(crashApi, tr.id);
    const railPayouts = () => testDb().selectFrom('rail_payments').select('id').where('reference', '=', tr.id).where('purpose', '=', 'payout').execute();
    await killRightAfter(async () => (await railPayouts()).length > 0);
    await waitForTransferState(t.api, tr.id, 'payment_processed', 90_000);
    expect(await railPayouts()).toHaveLength(1);
    await waitFor(async () => (await crashApi.get(`/v0/transfers/${tr.id}`)).body.state === 'payment_processed');
  }, 120_000);

  test("a deposit the provider reports while no worker runs: 503, nothing recorded; delivered again once the worker is back, it funds the transfer once", async () => {
    const tr = await achToAchThroughCrashApi('45.00');
    const event = {
      id: `evt_${randomBytes(8).toString('hex')}`, type: 'payment.received',
      data: { payment_id: `prov_${randomBytes(8).toString('hex')}`, rail: 'ach', currency: 'usd', amount: '45.00', reference: tr.source_deposit_instructions.deposit_reference },
    };
    const deliver = () => {
      const rawBody = JSON.stringify(event);
      return crashApi.request('POST', '/provider-webhooks/rails', {
        rawBody, headers: { 'Content-Type': 'application/json', 'Rail-Signature': signSandboxWebhook(stack().processEnv.RAIL_WEBHOOK_SECRET!, rawBody) },
      });
    };
    worker!.kill('SIGKILL');
    worker = undefined;
    const first = await deliver();
    expect(first.status).toBe(503);
    expect(first.body.error.code).toBe('service_unavailable');
    // Kept without an outcome (an operator sees it as not handled) until the provider delivers again.
    expect(await testDb().selectFrom('rail_events').select('outcome').where('id', '=', event.id).executeTakeFirstOrThrow()).toEqual({ outcome: null });
    worker = startWorker();
    // The provider delivers again until it is answered (503 while the worker is still starting).
    const again = await untilAnswered(deliver);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ received: [{ id: event.id, outcome: 'deposit_received' }] });
    await waitForTransferState(t.api, tr.id, 'payment_processed', 90_000);
    const deposits = await testDb().selectFrom('payments').select(['status', 'provider_payment_id']).where('transfer_id', '=', tr.id).where('kind', '=', 'deposit').execute();
    expect(deposits).toEqual([{ status: 'settled', provider_payment_id: event.data.payment_id }]);
    expect(await testDb().selectFrom('payments').select('id').where('transfer_id', '=', tr.id).where('kind', '=', 'deposit_return').execute()).toEqual([]);
  }, 120_000);

  test('a cancel sent while no worker runs: 503 instead of a request that hangs; sent again once the worker is back, it is the same cancellation', async () => {
    const tr = await achToAchThroughCrashApi('46.00');
    worker?.kill('SIGKILL');
    worker = undefined;
    const first = await crashApi.delete(`/v0/transfers/${tr.id}`);
    expect(first.status).toBe(503);
    expect(first.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringMatching(/did not answer within 4 s .*cancel it again \(the same cancellation\)/) });
    expect(first.headers.get('retry-after')).toBe('1');
    expect((await crashApi.get(`/v0/transfers/${tr.id}`)).body.state).toBe('awaiting_funds');
    worker = startWorker();
    // Sent again until answered: the same cancellation (200), or, when the workflow took the first
    // request before this one reached it, 409 for a transfer that is canceled already.
    const again = await untilAnswered(() => crashApi.delete(`/v0/transfers/${tr.id}`));
    if (again.status === 200) expect(again.body).toMatchObject({ state: 'canceled', state_reason: 'canceled_by_developer' });
    else expect(again.body.error).toMatchObject({ code: 'invalid_state', message: 'The transfer is canceled; it can no longer be canceled' });
    await waitForTransferState(crashApi, tr.id, 'canceled');
    expect((await crashApi.get(`/v0/transfers/${tr.id}`)).body.state_reason).toBe('canceled_by_developer');
    // One cancellation in the workflow's history, whichever of the requests the workflow took.
    const history = await (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`).fetchHistory();
    const accepted = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    expect(accepted.map((e) => e.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest?.meta?.updateId)).toEqual([`cancel:${tr.id}`]);
    const states = (await crashApi.get(`/v0/events?object_id=${tr.id}&type=transfer.updated`)).body.data.map((e: { data: { state: string } }) => e.data.state);
    expect(states).toEqual(['canceled']);
  }, 120_000);

  test('stray fiat deposit: exactly one return with the provider after the restart, settled once', async () => {
    const tr = await achToAchThroughCrashApi('44.00');
    await sandboxDeposit(crashApi, tr.id, { amount: '44.50' });
    const inbound = await testDb().selectFrom('rail_payments').select('id').where('purpose', '=', 'inbound_deposit')
      .where('reference', '=', tr.source_deposit_instructions.deposit_reference).executeTakeFirstOrThrow();
    const railReturns = () => testDb().selectFrom('rail_payments').select('id').where('reference', '=', inbound.id).where('purpose', '=', 'deposit_return').execute();
    await killRightAfter(async () => (await railReturns()).length > 0);
    const result = await (await temporalClient()).workflow.getHandle(`rail-deposit-return:${tr.id}:${inbound.id}`).result();
    expect(result).toEqual({ returned: true });
    expect(await railReturns()).toHaveLength(1);
    const returns = (await crashApi.get(`/v0/payments?transfer_id=${tr.id}&kind=deposit_return`)).body.data;
    expect(returns).toMatchObject([{ status: 'settled', amount: '44.50' }]);
    const returnKey = `${tr.id}:deposit_return:${inbound.id}`;
    const posted = await testDb().selectFrom('ledger_transactions').select('idempotency_key')
      .where('idempotency_key', 'in', [`${tr.id}:deposit:unmatched:${inbound.id}:ledger:received`, `${returnKey}:ledger:returned`]).execute();
    expect(posted).toHaveLength(2);
    expect((await crashApi.get(`/v0/transfers/${tr.id}`)).body.state).toBe('awaiting_funds');
    await expectLedgerBalanced();
  }, 120_000);
});
