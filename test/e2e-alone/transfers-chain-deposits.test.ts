import { stack, runCli, temporalClient, testDb, waitFor, workflowBundle } from '../harness';
import { chainKeys, chainUrl, fundedCustomerWallet, impersonatedWallet, sandboxDeposit, tokenBalance, transferTestParties, waitForChainWatch, waitForTransferState } from '../harness/transfers';
import { bitcoinKeys, outsideAddress, whileMining } from '../harness/bitcoin';
import { sql } from 'kysely';
import { createPublicClient, createTestClient, createWalletClient, erc20Abi, http, parseEventLogs, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { STABLECOIN_ABI, sandboxTokenAddress } from '../../src/chains/evm';
import { Worker } from '@temporalio/worker';

// Transfers funded on chain: the watch for the deposit, and deposits no transfer took going back to their senders.
// (HTTP → API → PostgreSQL → Temporal → rail simulators and local anvil chains.)

const { parties: p, usdcToWire } = transferTestParties();

/**
 * Runs the scheduled stray-deposit scan once, on this stack's worker (the schedule itself fires daily
 * in tests); `returns` are the ids of the return workflows it started, whichever tests' strays they are.
 */
async function scanStrayDeposits() {
  const client = await temporalClient();
  const workflowId = `test-scan-stray-deposits-${Date.now()}`;
  const result = await client.workflow.execute('scanStrayDepositsWorkflow', { taskQueue: stack().taskQueue, workflowId, args: [] });
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const returns = events!.flatMap((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
  return { workflowId, returns, ...(result as { found: number; returnsStarted: number }) };
}

test('stray deposits go back to their senders: one after the transfer was canceled, and the one of another amount; a listed sender’s is held', async () => {
  const client = await temporalClient();
  const listed = '0x7F367cC41522cE07553e823bf3be79A889DEbe1B';
  const wallet = await fundedCustomerWallet('ethereum', 'usdc', 50_000_000n, 6);
  const sanctioned = await impersonatedWallet('ethereum', 'usdc', listed, 5_000_000n);
  // A transfer paid after a deposit of another amount: that stray stays at the deposit address when
  // the transfer is done, for the scan to send back.
  const payer = await fundedCustomerWallet('ethereum', 'usdc', 20_000_000n, 7);
  const paid = (await p.t.api.post('/v0/transfers', usdcToWire('10.00', payer.address))).body;
  const paidAddress = paid.source_deposit_instructions.to_address;
  const otherAmount = await payer.send(paidAddress, 1_500_000n);
  await waitFor(async () => (await p.t.api.get(`/v0/transfers/${paid.id}`)).body.state_reason ?? undefined, { what: 'the deposit of another amount seen' });
  await payer.send(paidAddress, 10_000_000n);
  await waitForTransferState(p.t.api, paid.id, 'payment_processed');
  await client.workflow.getHandle(`transfer:${paid.id}`).result();
  expect(await tokenBalance('ethereum', 'usdc', paidAddress)).toBe(1_500_000n);

  const tr = (await p.t.api.post('/v0/transfers', usdcToWire('20.00', wallet.address))).body;
  const address = tr.source_deposit_instructions.to_address;
  expect((await p.t.api.delete(`/v0/transfers/${tr.id}`)).status).toBe(200);
  await client.workflow.getHandle(`transfer:${tr.id}`).result();

  // Nobody watches the address any more: the scan finds what arrives there, never credits it.
  const walletBefore = await tokenBalance('ethereum', 'usdc', wallet.address);
  const late = await wallet.send(address, 20_000_000n);
  const fromListed = await sanctioned.send(address, 5_000_000n);
  expect(await tokenBalance('ethereum', 'usdc', wallet.address)).toBe(walletBefore - 20_000_000n);
  // Both with their confirmations before the scan reads the chain.
  await createTestClient({ mode: 'anvil', transport: http(chainUrl('ethereum')) }).mine({ blocks: 2 });
  const scan = await scanStrayDeposits();
  expect(scan.found).toBeGreaterThanOrEqual(3);
  expect(scan.returns).toEqual(expect.arrayContaining([`stray-deposits:${tr.id}`, `stray-deposits:${paid.id}`]));
  expect(scan.returnsStarted).toBe(scan.returns.length);
  const returnRun = client.workflow.getHandle(`stray-deposits:${tr.id}`);
  expect(await returnRun.result()).toEqual({ returned: 1, held: 1 });

  const deposits = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=deposit`)).body.data;
  expect(deposits.map((p: any) => [p.tx_hash, p.amount, p.status, p.failure_reason]).sort()).toEqual([
    [late, '20.000000', 'failed', 'arrived after the transfer was canceled; not credited, returned to the sender'],
    [fromListed, '5.000000', 'failed', 'arrived after the transfer was canceled; not credited, returned to the sender'],
  ].sort());
  const returns = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=deposit_return`)).body.data;
  const back = returns.find((p: any) => p.status === 'settled');
  expect(back).toMatchObject({ payment_rail: 'ethereum', currency: 'usdc', amount: '20.000000', to_address: wallet.address, failure_reason: null });
  expect(back.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(back.network_fee).toMatch(/^\d+ \(smallest unit of eth\)$/);
  expect(returns.find((p: any) => p.status === 'held')).toMatchObject({
    amount: '5.000000', to_address: listed, tx_hash: null,
    failure_reason: expect.stringMatching(new RegExp(`^the sender ${listed} is listed for .+ \\(us_ofac_sdn\\): held for compliance, not returned$`)),
  });
  const canceled = (await p.t.api.get(`/v0/transfers/${tr.id}`)).body;
  expect(canceled).toMatchObject({ state: 'canceled' });

  // On chain: the 20 USDC swept from the deposit address and sent back from the treasury; the listed
  // sender's 5 USDC stays where it arrived.
  expect(await tokenBalance('ethereum', 'usdc', wallet.address)).toBe(walletBefore);
  expect(await tokenBalance('ethereum', 'usdc', address)).toBe(5_000_000n);
  const node = createPublicClient({ transport: http(chainUrl('ethereum')) });
  const sent = await node.getTransactionReceipt({ hash: back.tx_hash });
  expect(parseEventLogs({ abi: erc20Abi, logs: sent.logs, eventName: 'Transfer' })[0]!.args)
    .toEqual({ from: chainKeys.treasury.address, to: wallet.address, value: 20_000_000n });
  // Every return the scan started has ended (earlier tests' strays too), so what the ledger holds for
  // senders below is settled.
  await Promise.all(scan.returns.map((id) => client.workflow.getHandle(id).result()));
  // The stray of another amount went back to its sender from the treasury (its transfer had swept its own deposit).
  expect(await client.workflow.getHandle(`stray-deposits:${paid.id}`).result()).toEqual({ returned: 1, held: 0 });
  const paidDeposits = (await p.t.api.get(`/v0/payments?transfer_id=${paid.id}&kind=deposit`)).body.data;
  expect(paidDeposits.find((p: any) => p.tx_hash === otherAmount)).toMatchObject({ status: 'failed', amount: '1.500000' });
  expect((await p.t.api.get(`/v0/payments?transfer_id=${paid.id}&kind=deposit_return`)).body.data)
    .toMatchObject([{ status: 'settled', amount: '1.500000', to_address: payer.address }]);
  expect(await tokenBalance('ethereum', 'usdc', payer.address)).toBe(10_000_000n);
  expect(await tokenBalance('ethereum', 'usdc', paidAddress)).toBe(0n);
  // The ledger holds the listed sender's 5 USDC for them; the returned 20 and 1.5 came and went.
  const held = await testDb().selectFrom('ledger_accounts').select('balance_minor')
    .where('developer_id', '=', p.t.developerId).where('purpose', '=', 'unapplied_deposits').where('owner_id', '=', 'ethereum').where('currency', '=', 'usdc')
    .executeTakeFirstOrThrow();
  expect(held.balance_minor).toBe('5000000');

  // Nothing is left to do for this transfer: a second scan starts no second return.
  const { runId } = await returnRun.describe();
  await scanStrayDeposits();
  expect((await client.workflow.getHandle(`stray-deposits:${tr.id}`).describe()).runId).toBe(runId);

  // Compliance clears it for another address: an operator releases the held return (CLI), it is
  // screened at the new address and sent there; the override is kept on the payment.
  const heldReturn = returns.find((p: any) => p.status === 'held');
  const release = (...args: string[]) => runCli(['payments', 'release', heldReturn.id, '--operator', 'compliance.bob', ...args]);
  const otherListed = '0xd882cfc20f52f2599d84b8e8d58c7fb62cfe344b';
  expect(release('--to-address', otherListed).status).toBe(0);
  expect(await client.workflow.getHandle(`stray-deposits:${tr.id}`).result()).toEqual({ returned: 0, held: 1 });
  const heldAgain = (await p.t.api.get(`/v0/payments/${heldReturn.id}`)).body;
  expect(heldAgain).toMatchObject({ status: 'held', to_address: otherListed });
  expect(heldAgain.failure_reason).toMatch(new RegExp(`^the address ${otherListed} it was released to is listed for .+ \\(us_ofac_sdn\\): held for compliance, not returned$`));
  const refund = chainKeys.account(8).address;
  const badAddress = release('--to-address', '0x1234');
  expect(badAddress.status).toBe(1);
  expect(badAddress.stderr).toContain('--to-address must be 0x followed by 40 hexadecimal characters');
  const released = release('--to-address', refund, '--note', 'license granted');
  expect(released.stderr).toBe('');
  expect(released.stdout).toContain(`${heldReturn.id}: released by compliance.bob, returning to ${refund}`);
  expect(await client.workflow.getHandle(`stray-deposits:${tr.id}`).result()).toEqual({ returned: 1, held: 0 });
  const sentOnRelease = (await p.t.api.get(`/v0/payments/${heldReturn.id}`)).body;
  expect(sentOnRelease).toMatchObject({ status: 'settled', to_address: refund, amount: '5.000000', failure_reason: null });
  expect(await tokenBalance('ethereum', 'usdc', address)).toBe(0n);
  const audit = await testDb().selectFrom('payments').select('operator_releases').where('id', '=', heldReturn.id).executeTakeFirstOrThrow();
  expect(audit.operator_releases).toMatchObject([
    { operator: 'compliance.bob', note: null, held_to_address: listed, held_reason: heldReturn.failure_reason },
    { operator: 'compliance.bob', note: 'license granted', held_to_address: otherListed, held_reason: heldAgain.failure_reason },
  ]);
  const owed = await testDb().selectFrom('ledger_accounts').select('balance_minor')
    .where('developer_id', '=', p.t.developerId).where('purpose', '=', 'unapplied_deposits').where('owner_id', '=', 'ethereum').where('currency', '=', 'usdc')
    .executeTakeFirstOrThrow();
  expect(owed.balance_minor).toBe('0');
  expect(release().stderr).toContain(`${heldReturn.id} is settled; only a held return can be released`);

  // In production the schedule runs the scan (here every STRAY_DEPOSIT_SCAN_SECONDS = 86400).
  const schedule = await client.schedule.getHandle('chains:scan-stray-deposits').describe();
  expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType: 'scanStrayDepositsWorkflow' });
  expect(schedule.spec.intervals).toMatchObject([{ every: 86_400_000 }]);

  // Both workflows replay.
  const histories = await Promise.all([`stray-deposits:${tr.id}`, scan.workflowId].map(async (workflowId) =>
    ({ workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() })));
  for await (const result of Worker.runReplayHistories(workflowBundle(), histories)) expect(result.error).toBeUndefined();
}, 120_000);

test('bitcoin: a deposit of another amount goes back to its sender, paid from the platform\'s coins (deposits are not swept there)', async () => {
  const client = await temporalClient();
  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '0.02', on_behalf_of: p.us.id, source: { payment_rail: 'bitcoin', currency: 'btc', from_address: outsideAddress() },
    destination: { payment_rail: 'wire', currency: 'usd', external_account_id: p.usAccount.id },
  })).body;
  // The sandbox's deposits come from its faucet: that is the sender a stray goes back to.
  await sandboxDeposit(p.t.api, tr.id, { amount: '0.015' });
  await whileMining(waitFor(async () => (await p.t.api.get(`/v0/transfers/${tr.id}`)).body.state_reason ?? undefined, { what: 'the deposit of another amount seen' }));
  await sandboxDeposit(p.t.api, tr.id);
  await whileMining(waitForTransferState(p.t.api, tr.id, 'payment_processed', 90_000));
  await client.workflow.getHandle(`transfer:${tr.id}`).result();
  const scan = await scanStrayDeposits();
  expect(scan.returns).toContain(`stray-deposits:${tr.id}`);
  expect(await whileMining(client.workflow.getHandle(`stray-deposits:${tr.id}`).result())).toEqual({ returned: 1, held: 0 });
  const back = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=deposit_return`)).body.data;
  expect(back).toMatchObject([{ payment_rail: 'bitcoin', status: 'settled', amount: '0.01500000', to_address: bitcoinKeys.faucet.address }]);
  const paid = await testDb().selectFrom('bitcoin_outputs').select('amount_sats').where('txid', '=', back[0].tx_hash).where('address', '=', bitcoinKeys.faucet.address).execute();
  expect(paid.map((o) => o.amount_sats)).toContain('1500000');
  expect(await testDb().selectFrom('chain_sweeps').select('sweep_key').where('transfer_id', '=', tr.id).execute()).toEqual([]);
}, 180_000);

test('a stray return that reverts on chain is held; released to another address, it is signed anew with a new nonce', async () => {
  const client = await temporalClient();
  const url = chainUrl('ethereum');
  const node = createTestClient({ mode: 'anvil', transport: http(url) });
  const chain = createPublicClient({ transport: http(url) });
  const chainDef = { id: await chain.getChainId(), name: 'ethereum', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } };
  const sender = privateKeyToAccount(generatePrivateKey()).address;
  const wallet = await impersonatedWallet('ethereum', 'usdc', sender, 7_000_000n);
  const tr = (await p.t.api.post('/v0/transfers', usdcToWire('7.00', sender))).body;
  const address = tr.source_deposit_instructions.to_address;
  expect((await p.t.api.delete(`/v0/transfers/${tr.id}`)).status).toBe(200);
  await client.workflow.getHandle(`transfer:${tr.id}`).result();
  await wallet.send(address, 7_000_000n);
  await node.mine({ blocks: 2 });

  // Staging a revert after signing: the deposit address has gas of its own (so the return is the
  // treasury's only transaction), and the treasury's next nonce is moved one ahead, so the return
  // waits in the node's pool behind a gap while the issuer blocks the sender; then the gap is filled.
  await node.setBalance({ address, value: 10n ** 17n });
  const treasury = chainKeys.treasury.address;
  const gap = await chain.getTransactionCount({ address: treasury, blockTag: 'pending' });
  await sql`insert into chain_nonces (chain, address, next_nonce) values ('ethereum', ${treasury}, ${gap + 1})
            on conflict (chain, address) do update set next_nonce = excluded.next_nonce`.execute(testDb());
  await scanStrayDeposits();
  const signed = await waitFor(async () => {
    const payment = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=deposit_return`)).body.data[0];
    return payment?.tx_hash ? payment : undefined;
  }, { what: 'the return signed' });
  const issuer = createWalletClient({ account: chainKeys.issuer, transport: http(url) });
  const blocked = await issuer.writeContract({
    address: sandboxTokenAddress(chainKeys, 'ethereum', 'usdc'), abi: STABLECOIN_ABI, functionName: 'setBlocked', args: [sender, true], chain: chainDef,
  });
  await chain.waitForTransactionReceipt({ hash: blocked, pollingInterval: 100 });
  await createWalletClient({ account: chainKeys.treasury, transport: http(url) }).sendTransaction({ to: treasury, value: 0n, nonce: gap, chain: chainDef });
  expect(await client.workflow.getHandle(`stray-deposits:${tr.id}`).result()).toEqual({ returned: 0, held: 1 });
  const held = (await p.t.api.get(`/v0/payments/${signed.id}`)).body;
  const reason = 'the chain refused the return: the token contract reverted the transfer; held for operators';
  expect(held).toMatchObject({ status: 'held', tx_hash: signed.tx_hash, to_address: sender, failure_reason: reason });
  expect((await chain.getTransactionReceipt({ hash: signed.tx_hash })).status).toBe('reverted');

  // Compliance has it sent to another address of the sender's: a new transaction, with a new nonce.
  const elsewhere = privateKeyToAccount(generatePrivateKey()).address;
  const released = runCli(['payments', 'release', signed.id, '--operator', 'compliance.ann', '--to-address', elsewhere]);
  expect(released.stderr).toBe('');
  expect(released.status).toBe(0);
  expect(await client.workflow.getHandle(`stray-deposits:${tr.id}`).result()).toEqual({ returned: 1, held: 0 });
  const sent = (await p.t.api.get(`/v0/payments/${signed.id}`)).body;
  expect(sent).toMatchObject({ status: 'settled', to_address: elsewhere, amount: '7.000000', failure_reason: null, replaced_tx_hashes: [] });
  expect(sent.tx_hash).not.toBe(signed.tx_hash);
  const [first, second] = await Promise.all([signed.tx_hash, sent.tx_hash].map((hash: Hex) => chain.getTransaction({ hash })));
  expect(second!.nonce).toBeGreaterThan(first!.nonce);
  expect(await tokenBalance('ethereum', 'usdc', elsewhere)).toBe(7_000_000n);
  const audit = await testDb().selectFrom('payments').select('operator_releases').where('id', '=', signed.id).executeTakeFirstOrThrow();
  expect(audit.operator_releases).toMatchObject([
    { operator: 'compliance.ann', held_to_address: sender, held_reason: reason, reverted_tx_hash: signed.tx_hash },
  ]);
}, 120_000);

test('a transfer funded on chain: cancelled while the chain is being watched, by DELETE or in Temporal, ends at once', async () => {
  const client = await temporalClient();
  const wallet = await fundedCustomerWallet('ethereum', 'usdc', 100_000_000n);
  const onChain = () => usdcToWire('20.00', wallet.address);

  const deleted = (await p.t.api.post('/v0/transfers', onChain())).body;
  await waitForChainWatch(deleted.id);
  const res = await p.t.api.delete(`/v0/transfers/${deleted.id}`);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ state: 'canceled', state_reason: 'canceled_by_developer' });

  const canceledInTemporal = (await p.t.api.post('/v0/transfers', onChain())).body;
  await waitForChainWatch(canceledInTemporal.id);
  await client.workflow.getHandle(`transfer:${canceledInTemporal.id}`).cancel();
  expect((await waitForTransferState(p.t.api, canceledInTemporal.id, 'canceled')).state_reason).toBe('workflow_canceled');

  // The watcher ran on the watchers' own task queue (their slots are not the payouts').
  const { events } = await client.workflow.getHandle(`transfer:${deleted.id}`).fetchHistory();
  const scheduled = events!.map((e) => e.activityTaskScheduledEventAttributes).filter((a) => a?.activityType?.name === 'watchChainDeposit');
  expect(scheduled.map((a) => a!.taskQueue!.name)).toEqual([`${stack().processEnv.TEMPORAL_TASK_QUEUE}-chain-watch`]);

  for (const id of [deleted.id, canceledInTemporal.id]) {
    const handle = client.workflow.getHandle(`transfer:${id}`);
    expect(await handle.result()).toMatchObject({ state: 'canceled' });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(await testDb().selectFrom('ledger_transactions').select('id').where('reference_id', '=', id).execute()).toEqual([]);
  }
});
