import { apiClient, createTenant, individual, temporalClient, testDb, waitFor } from '../harness';
import { approvedCustomer, chainKeys, chainUrl, freshReceiver, fundedCustomerWallet, internationalAccount, tokenBalance, transferTestParties, waitForTransferState } from '../harness/transfers';
import { createPublicClient, erc20Abi, http, parseEventLogs, type Hex } from 'viem';
import { sql } from 'kysely';

// Transfers end to end, created and validated: fiat to fiat, onramp, offramp, the checks on creation, idempotency.
// (HTTP → API → PostgreSQL → Temporal → rail simulators and local anvil chains.)

const { parties: p, achToWire, usdcToWire, deposit } = transferTestParties();
// This file's own receiver: its balance is measured, and other files pay the shared RECEIVER at the same time.
const receiver = freshReceiver();

test('fiat to fiat: awaiting_funds with deposit instructions and receipt, then every state to payment_processed', async () => {
  const created = await p.t.api.post('/v0/transfers', achToWire('250.00', { developer_fee: '2.50', client_reference_id: 'invoice-42' }));
  expect(created.status).toBe(201);
  const tr = created.body;
  expect(tr).toMatchObject({
    object: 'transfer', state: 'awaiting_funds', on_behalf_of: p.us.id, amount: '250.00', developer_fee: '2.50', currency: 'usd',
    client_reference_id: 'invoice-42',
    source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'wire', currency: 'usd', external_account_id: p.usAccount.id },
    receipt: {
      initial_amount: '250.00', developer_fee: '2.50', exchange_fee: '0.00', subtotal_amount: '247.50', gas_fee: '0.00',
      final_amount: '247.50', exchange_rate: '1', source_tx_hash: null,
    },
  });
  expect(tr.source_deposit_instructions).toMatchObject({ payment_rail: 'ach', currency: 'usd', amount: '250.00', bank_routing_number: expect.any(String) });
  expect(tr.source_deposit_instructions.deposit_reference).toMatch(/^FP[A-Z0-9]{12}$/);
  // Its workflow waits for the deposit without a task: started with a delay of the deposit's expiry
  // (72 hours), which the deposit's Update cuts short.
  const waiting = (await (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`).fetchHistory()).events ?? [];
  expect(waiting.map((e) => e.eventType)).toEqual([1]); // WORKFLOW_EXECUTION_STARTED
  expect(Number(waiting[0]!.workflowExecutionStartedEventAttributes!.firstWorkflowTaskBackoff!.seconds)).toBe(72 * 3600);

  await deposit(tr.id);
  const processed = await waitForTransferState(p.t.api, tr.id, 'payment_processed');
  expect(processed.state_reason).toBeNull();

  const events = (await p.t.api.get(`/v0/events?object_id=${tr.id}&limit=50`)).body.data.map((e: any) => e.event).reverse();
  expect(events).toEqual([
    'transfer.created',
    'transfer.updated', 'transfer.funds_received',
    'transfer.updated', 'transfer.in_review',
    'transfer.updated', 'transfer.payment_submitted',
    'transfer.updated', 'transfer.payment_processed',
  ]);
  const updates = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated`)).body.data;
  expect(updates.map((e: any) => e.data.previous_attributes.state).reverse()).toEqual(['awaiting_funds', 'funds_received', 'in_review', 'payment_submitted']);

  const payments = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data;
  expect(payments.map((p: any) => [p.kind, p.payment_rail, p.amount, p.status]).sort()).toEqual([
    ['deposit', 'ach', '250.00', 'settled'],
    ['payout', 'wire', '247.50', 'settled'],
  ]);

  const handle = (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`);
  const description = await handle.describe();
  expect(description.searchAttributes).toMatchObject({
    TransferState: ['payment_processed'], CustomerId: [p.us.id], SourceRail: ['ach'], DestinationRail: ['wire'], Currency: ['usd'],
  });

  // The ledger: the customer's balance went up by the deposit and back to zero with the payout.
  const entries = await testDb().selectFrom('ledger_transactions').select('description').where('reference_id', '=', tr.id).orderBy('created_at').execute();
  expect(entries.map((e) => e.description)).toEqual(['transfer deposit', 'transfer payout']);
  const devFees = await testDb().selectFrom('ledger_accounts').select('balance_minor').where('owner_id', '=', p.t.developerId).where('purpose', '=', 'developer_fees').executeTakeFirstOrThrow();
  expect(devFees.balance_minor).toBe('250');

  const listed = (await p.t.api.get('/v0/transfers?client_reference_id=invoice-42')).body.data;
  expect(listed.map((x: any) => x.id)).toEqual([tr.id]);
});

test('onramp: ACH in, USDC out on base through a real ERC-20 transfer', async () => {
  const before = await tokenBalance('base', 'usdc', receiver);
  const created = await p.t.api.post('/v0/transfers', {
    amount: '100.00', on_behalf_of: p.us.id,
    source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: receiver },
  });
  expect(created.status).toBe(201);
  const r = created.body.receipt;
  expect(r).toMatchObject({ initial_amount: '100.00', exchange_fee: '0.10', subtotal_amount: '99.90', exchange_rate: '1' });
  expect(Number(r.gas_fee)).toBeGreaterThan(0);
  expect(Number(r.final_amount)).toBeCloseTo(99.9 - Number(r.gas_fee), 6);
  await deposit(created.body.id);
  const done = await waitForTransferState(p.t.api, created.body.id, 'payment_processed');
  expect(done.receipt.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  const after = await tokenBalance('base', 'usdc', receiver);
  expect(after - before).toBe(BigInt(Math.round(Number(r.final_amount) * 1e6)));
  const payout = (await p.t.api.get(`/v0/payments?transfer_id=${created.body.id}&kind=payout`)).body.data[0];
  expect(payout).toMatchObject({ payment_rail: 'base', currency: 'usdc', status: 'settled', tx_hash: done.receipt.destination_tx_hash, to_address: receiver });
  expect(payout.network_fee).toMatch(/^\d+ \(smallest unit of eth\)$/);
});

test('offramp: USDC sent to the deposit address on ethereum is found after its confirmations, then a wire pays out', async () => {
  const wallet = await fundedCustomerWallet('ethereum', 'usdc', 500_000_000n);
  const created = await p.t.api.post('/v0/transfers', usdcToWire('300.00', wallet.address));
  expect(created.status).toBe(201);
  const instructions = created.body.source_deposit_instructions;
  expect(instructions).toMatchObject({ payment_rail: 'ethereum', currency: 'usdc', amount: '300.000000', from_address: wallet.address });
  expect(instructions.to_address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  expect(created.body.receipt).toMatchObject({ exchange_fee: '0.300000', subtotal_amount: '299.700000', final_amount: '299.70', gas_fee: '0.00' });
  // A different amount is not this transfer's deposit: it is listed as a failed deposit, never
  // credited, and the waiting transfer says why; the quoted amount then funds it.
  const stray = await wallet.send(instructions.to_address, 1_000_000n);
  const told = await waitFor(async () => {
    const x = (await p.t.api.get(`/v0/transfers/${created.body.id}`)).body;
    return x.state_reason ? x : undefined;
  }, { what: 'the mismatched deposit shown' });
  expect(told).toMatchObject({
    state: 'awaiting_funds',
    state_reason: 'received 1.000000 usdc, not the quoted 300.000000: only a deposit of exactly the quoted amount funds the transfer',
  });
  const txHash = await wallet.send(instructions.to_address, 300_000_000n);
  const done = await waitForTransferState(p.t.api, created.body.id, 'payment_processed');
  expect(done.receipt.source_tx_hash).toBe(txHash);
  expect(done.state_reason).toBeNull();
  const deposits = (await p.t.api.get(`/v0/payments?transfer_id=${done.id}&kind=deposit`)).body.data;
  expect(deposits).toHaveLength(2);
  expect(deposits.find((p: any) => p.status === 'settled')).toMatchObject({ payment_rail: 'ethereum', tx_hash: txHash, from_address: wallet.address, amount: '300.000000' });
  expect(deposits.find((p: any) => p.status === 'failed')).toMatchObject({
    payment_rail: 'ethereum', tx_hash: stray, from_address: wallet.address, amount: '1.000000',
    failure_reason: '1.000000 usdc does not match the quoted 300.000000; not credited, returned to the sender',
  });
  const reasons = (await p.t.api.get(`/v0/events?object_id=${done.id}&type=transfer.updated&limit=50`)).body.data
    .filter((e: any) => 'state_reason' in e.data.previous_attributes && e.data.state === 'awaiting_funds');
  expect(reasons).toHaveLength(1);

  // The deposit moves into the treasury that pays payouts and refunds: the treasury sends the deposit
  // address its gas, then the deposit address sends the quoted amount; the stray 1 USDC stays there
  // until the stray-deposit scan sends it back (tested below, with a stray of its own).
  await (await temporalClient()).workflow.getHandle(`transfer:${done.id}`).result();
  const sweep = await testDb().selectFrom('chain_sweeps').selectAll().where('transfer_id', '=', done.id).executeTakeFirstOrThrow();
  expect(sweep).toMatchObject({ status: 'swept', chain: 'ethereum', currency: 'usdc', from_address: instructions.to_address, amount_minor: '300000000' });
  const node = createPublicClient({ transport: http(chainUrl('ethereum')) });
  const gas = await node.getTransactionReceipt({ hash: sweep.gas_tx_hash as Hex });
  expect(gas).toMatchObject({ status: 'success', from: chainKeys.treasury.address.toLowerCase(), to: instructions.to_address.toLowerCase() });
  const swept = await node.getTransactionReceipt({ hash: sweep.sweep_tx_hash as Hex });
  expect(swept).toMatchObject({ status: 'success', from: instructions.to_address.toLowerCase() });
  const [moved] = parseEventLogs({ abi: erc20Abi, logs: swept.logs, eventName: 'Transfer' });
  expect(moved.args).toEqual({ from: instructions.to_address, to: chainKeys.treasury.address, value: 300_000_000n });
  expect(await tokenBalance('ethereum', 'usdc', instructions.to_address)).toBe(1_000_000n);
});

describe('validation', () => {
  const cases: [string, () => Record<string, unknown>, number, string, RegExp][] = [
    ['currency not on the rail', () => achToWire('10.00', { source: { payment_rail: 'ach', currency: 'eur' } }), 400, 'source.currency', /ach carries usd/],
    ['asset not on the chain', () => ({ ...achToWire('10.00'), destination: { payment_rail: 'tron', currency: 'usdc', to_address: 'TMStbg5fgb4uTV7fK1gEYF9hKAzP3siPsG' } }), 400, 'destination.currency', /tron carries usdt/],
    ['too many decimals', () => achToWire('10.001'), 400, 'amount', /at most 2 decimals/],
    ['below the rail minimum', () => achToWire('0.50'), 400, 'amount', /ach takes amounts from 1.00/],
    ['above the rail maximum', () => achToWire('1000000.01'), 400, 'amount', /to 1000000.00/],
    ['developer fee not below the amount', () => achToWire('10.00', { developer_fee: '10.00' }), 400, 'developer_fee', /below the amount/],
    ['fiat payout without account', () => ({ ...achToWire('10.00'), destination: { payment_rail: 'wire', currency: 'usd' } }), 400, 'destination.external_account_id', /required/],
    ['chain source without from_address', () => ({ ...achToWire('10.00'), source: { payment_rail: 'base', currency: 'usdc' } }), 400, 'source.from_address', /required/],
    ['bad to_address', () => ({ ...achToWire('10.00'), destination: { payment_rail: 'base', currency: 'usdc', to_address: '0x1234' } }), 400, 'destination.to_address', /40 hexadecimal/],
    ['swift_charges off swift', () => ({ ...achToWire('10.00'), destination: { payment_rail: 'wire', currency: 'usd', external_account_id: p.usAccount.id, swift_charges: 'sha' } }), 400, 'destination.swift_charges', /only for the swift rail/],
    ['unknown rail', () => ({ ...achToWire('10.00'), source: { payment_rail: 'carrier_pigeon', currency: 'usd' } }), 400, 'source.payment_rail', /./],
    ['unknown customer', () => achToWire('10.00', { on_behalf_of: 'cus_nope' }), 400, 'on_behalf_of', /No such customer/],
    ['unknown field', () => achToWire('10.00', { memo: 'x' }), 400, 'memo', /./],
    ['international account on wire', () => ({ ...achToWire('10.00'), destination: { payment_rail: 'wire', currency: 'usd', external_account_id: 'INTL' } }), 400, 'destination.external_account_id', /pays a us_bank_account/],
    ['missing endorsement', () => ({ ...achToWire('10.00'), destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: 'INTL' } }), 409, 'on_behalf_of', /lacks the can_sepa_transfer endorsement/],
  ];
  let intl: any;
  beforeAll(async () => {
    intl = await internationalAccount(p.t.api, p.us.id, 'DE89370400440532013000', 'COBADEFFXXX', 'DE');
  });
  test.each(cases)('%s', async (_name, body, status, key, message) => {
    const payload = JSON.parse(JSON.stringify(body()).replace('"INTL"', JSON.stringify(intl.id)));
    // The tenant's transfers: other files' tests create theirs at the same time.
    const count = () => testDb().selectFrom('transfers').select((eb) => eb.fn.countAll<number>().as('n')).where('developer_id', '=', p.t.developerId).executeTakeFirstOrThrow();
    const before = await count();
    const res = await p.t.api.post('/v0/transfers', payload);
    expect(res.status).toBe(status);
    expect(res.body.error.source).toEqual({ location: 'body', key });
    expect(res.body.error.message).toMatch(message);
    const after = await count();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  test('customers without approved KYC, unverified and foreign accounts are refused', async () => {
    const pending = (await p.t.api.post('/v0/customers', individual())).body;
    const res = await p.t.api.post('/v0/transfers', achToWire('10.00', { on_behalf_of: pending.id }));
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'invalid_state', source: { key: 'on_behalf_of' } });
    const unverified = (await p.t.api.post('/v0/external-accounts', {
      customer_id: p.us.id, type: 'us_bank_account', account_name: 'Jane Doe', routing_number: '021000021', account_number: '55501234',
    })).body;
    const res2 = await p.t.api.post('/v0/transfers', { ...achToWire('10.00'), destination: { payment_rail: 'wire', currency: 'usd', external_account_id: unverified.id } });
    expect(res2.status).toBe(409);
    expect(res2.body.error.source.key).toBe('destination.external_account_id');
    const other = await createTenant();
    const otherCustomer = await approvedCustomer(other.api, 'US');
    const res3 = await p.t.api.post('/v0/transfers', achToWire('10.00', { on_behalf_of: otherCustomer.id }));
    expect(res3.status).toBe(400);
    expect(res3.body.error.source.key).toBe('on_behalf_of');
    const created = await p.t.api.post('/v0/transfers', achToWire('10.00'));
    expect((await other.api.get(`/v0/transfers/${created.body.id}`)).status).toBe(404);
    expect((await other.api.delete(`/v0/transfers/${created.body.id}`)).status).toBe(404);
    expect((await apiClient(p.t.liveSecret).get(`/v0/transfers/${created.body.id}`)).status).toBe(404);
    expect((await p.t.api.delete(`/v0/transfers/${created.body.id}`)).status).toBe(200);
  });
});

test('a transfer whose row cannot be written once its workflow started: an error, no transfer, its workflow ended', async () => {
  // The workflow starts first and the row is written after it (src/resources/transfers/routes.ts):
  // PostgreSQL refusing the row (a trigger of this test) must not leave a workflow behind.
  const marker = `cannot-be-written-${process.pid}`;
  await sql`create or replace function refuse_test_transfer() returns trigger language plpgsql as $$
    begin if new.client_reference_id like 'cannot-be-written-%' then raise exception 'refused by the test'; end if; return new; end $$`.execute(testDb());
  await sql`create trigger refuse_test_transfer before insert on transfers for each row execute function refuse_test_transfer()`.execute(testDb());
  try {
    const refused = await p.t.api.post('/v0/transfers', achToWire('34.00', { client_reference_id: marker }));
    expect(refused.status).toBe(500);
    expect(refused.body.error.code).toBe('internal_error');
  } finally {
    await sql`drop trigger refuse_test_transfer on transfers`.execute(testDb());
  }
  expect(await testDb().selectFrom('transfers').select('id').where('client_reference_id', '=', marker).execute()).toEqual([]);
  const client = await temporalClient();
  const ended = await waitFor(async () => {
    const found = [];
    for await (const w of client.workflow.list({ query: `WorkflowType = 'transferWorkflow' AND CustomerId = '${p.us.id}' AND ExecutionStatus = 'Terminated'` })) found.push(w);
    return found.length > 0 && found;
  }, { what: 'the terminated workflow of the transfer that was not written' });
  expect(ended).toHaveLength(1);
  expect(ended[0]!.workflowId).toMatch(/^transfer:tr_/);
});

test('50 concurrent POSTs with one Idempotency-Key create one transfer and one workflow', async () => {
  const key = `dup-${Date.now()}`;
  const results = await Promise.all(Array.from({ length: 50 }, () => p.t.api.post('/v0/transfers', achToWire('33.00', { client_reference_id: key }), { idempotencyKey: key })));
  const ok = results.filter((r) => r.status === 201);
  expect(ok.length).toBeGreaterThanOrEqual(1);
  expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
  for (const r of results.filter((x) => x.status !== 201)) expect(r.body.error.code).toBe('idempotency_key_in_use');
  const rows = await testDb().selectFrom('transfers').select('id').where('client_reference_id', '=', key).execute();
  expect(rows).toHaveLength(1);
  const replay = await p.t.api.post('/v0/transfers', achToWire('33.00', { client_reference_id: key }), { idempotencyKey: key });
  expect(replay.body.id).toBe(rows[0].id);
});
