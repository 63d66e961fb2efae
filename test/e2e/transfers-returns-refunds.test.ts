import { runCli, temporalClient, testDb, waitFor } from '../harness';
import { achToWireFor, freshReceiver, RECEIVER, tokenBalance, transferTestParties, verifiedUsAccount, waitForTransferState } from '../harness/transfers';
import { refundReturned as refundReturnedSignal, transferStatus } from '../../workflows/transfer-messages';

// Transfers that do not arrive or come back: undeliverable payouts, returns, refunds the source rejects or returns.
// (HTTP → API → PostgreSQL → Temporal → rail simulators and local anvil chains.)

const { parties: p, achToWire, deposit } = transferTestParties();
const receiver = RECEIVER;

test('undeliverable (.13): the bank rejects the payout with R03; the funds come back and are refunded', async () => {
  const tr = (await p.t.api.post('/v0/transfers', { ...achToWire('80.13'), destination: { payment_rail: 'ach_push', currency: 'usd', external_account_id: p.usAccount.id } })).body;
  await deposit(tr.id);
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded).toMatchObject({ return_code: 'R03', state_reason: 'rejected by the receiving bank (R03)' });
  const states = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated&limit=20`)).body.data.map((e: any) => e.data.state).reverse();
  expect(states).toEqual(['funds_received', 'in_review', 'payment_submitted', 'undeliverable', 'returned', 'refunded']);
  const payments = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data;
  expect(payments.map((p: any) => [p.kind, p.status]).sort()).toEqual([['deposit', 'settled'], ['payout', 'failed'], ['refund', 'settled'], ['return', 'settled']]);
});

test('undeliverable on chain: the review finds that the stablecoin blocks the receiver; nothing is sent, the deposit is refunded directly', async () => {
  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '20.00', on_behalf_of: p.us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'polygon', currency: 'usdt', to_address: '0x00000000000000000000000000000000000b10c5' },
  })).body;
  await deposit(tr.id);
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded.state_reason).toBe('the usdt contract on polygon blocks the destination address 0x00000000000000000000000000000000000b10c5');
  // in_review → undeliverable → refunded (spec 3.3): no payout, so no return leg.
  const states = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated&limit=20`)).body.data.map((e: any) => e.data.state).reverse();
  expect(states).toEqual(['funds_received', 'in_review', 'undeliverable', 'refunded']);
  const payments = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data;
  expect(payments.map((x: any) => [x.kind, x.status]).sort()).toEqual([['deposit', 'settled'], ['refund', 'settled']]);
});

test("refused before anything is sent (.12: the payee's bank reports the account closed): in_review → undeliverable → refunded, no return leg", async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('85.12'))).body;
  await deposit(tr.id);
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded).toMatchObject({ state_reason: 'the receiving bank reports the destination account closed (sandbox amounts ending in .12)', return_code: 'AC01' });
  const states = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated&limit=20`)).body.data.map((e: any) => e.data.state).reverse();
  expect(states).toEqual(['funds_received', 'in_review', 'undeliverable', 'refunded']);
  const named = (await p.t.api.get(`/v0/events?object_id=${tr.id}&limit=30`)).body.data.map((e: any) => e.event);
  expect(named).toEqual(expect.arrayContaining(['transfer.undeliverable', 'transfer.refunded']));
  expect(named).not.toContain('transfer.payment_submitted');
  expect(named).not.toContain('transfer.returned');
  const payments = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}`)).body.data;
  expect(payments.map((x: any) => [x.kind, x.status]).sort()).toEqual([['deposit', 'settled'], ['refund', 'settled']]);
});

test('a destination account deleted after the transfer was created: undeliverable before anything is sent, refunded', async () => {
  const account = await verifiedUsAccount(p.t.api, p.us.id);
  const tr = (await p.t.api.post('/v0/transfers', achToWireFor(p.us, account, '86.00'))).body;
  expect((await p.t.api.delete(`/v0/external-accounts/${account.id}`)).status).toBe(200);
  await deposit(tr.id);
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded.state_reason).toBe(`the destination account ${account.id} was deleted after the transfer was created`);
  expect((await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=payout`)).body.data).toEqual([]);
});

test('returned after processing (.14, inside the return window), then refunded', async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('90.14'))).body;
  await deposit(tr.id);
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded.return_code).toBe('AC04');
  const states = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated&limit=20`)).body.data.map((e: any) => e.data.state).reverse();
  expect(states).toEqual(['funds_received', 'in_review', 'payment_submitted', 'payment_processed', 'returned', 'refunded']);
});

test('a return through the sandbox route; a refund that keeps failing (.16) stays visible until it goes through', async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('95.16'))).body;
  await deposit(tr.id);
  await waitForTransferState(p.t.api, tr.id, 'payment_processed');
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R99' })).status).toBe(400);
  const res = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R01' });
  expect(res.status).toBe(200);
  const failing = await waitFor(async () => {
    const x = (await p.t.api.get(`/v0/transfers/${tr.id}`)).body;
    return x.state_reason?.startsWith('refund failing') ? x : undefined;
  }, { what: 'refund failing' });
  expect(failing.state).toBe('returned');
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded.return_code).toBe('R01');
  // Once the refund went through, the transfer says again why its money went back.
  expect(refunded.state_reason).toBe('returned by the receiving bank (R01)');
  const refund = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data[0];
  expect(refund.attempts).toBeGreaterThanOrEqual(3);
  expect(refund.status).toBe('settled');
  // Once the refund's return window has closed, the workflow has finished and nothing can be returned.
  await (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`).result();
  const late = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R01' });
  expect(late.status).toBe(409);
  expect(late.body.error.message).toMatch(/return window has closed/);
}, 90_000);

/** Waits until the transfer shows a rejected refund waiting for an operator. */
async function refundRejected(id: string) {
  return waitFor(async () => {
    const x = (await p.t.api.get(`/v0/transfers/${id}`)).body;
    return x.state_reason?.startsWith('refund rejected') ? x : undefined;
  }, { what: 'refund rejected' });
}

test('a refund the source bank rejects (.17): the money is back in customer funds until an operator retries it (CLI), then refunded', async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('96.17'))).body;
  await deposit(tr.id);
  await waitForTransferState(p.t.api, tr.id, 'payment_processed');
  // Nothing to retry yet.
  const early = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`);
  expect(early.status).toBe(409);
  expect(early.body.error.code).toBe('invalid_state');
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R01' })).status).toBe(200);

  const waiting = await refundRejected(tr.id);
  expect(waiting.state).toBe('returned');
  expect(waiting.state_reason).toBe('refund rejected: rejected by the source bank (R03); waiting for an operator to retry the refund');
  const [rejectedRefund] = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data;
  expect(rejectedRefund).toMatchObject({ status: 'failed', return_code: 'R03', amount: '96.17' });
  // The refund's ledger legs are reversed: the customer's funds hold the amount again.
  const legs = await testDb().selectFrom('ledger_transactions').select('idempotency_key').where('reference_id', '=', tr.id).execute();
  expect(legs.map((l) => l.idempotency_key).sort()).toEqual(
    ['deposit', 'payout', 'payout-reversal', 'refund', 'refund-reversal:1'].map((k) => `${tr.id}:ledger:${k}`).sort(),
  );
  const shown = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated&limit=50`)).body.data
    .find((e: any) => e.data.state_reason?.startsWith('refund rejected'));
  expect(shown.data.previous_attributes).toHaveProperty('state_reason');
  const status = await (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`).query(transferStatus);
  expect(status.step).toMatch(/^Refund rejected: .*Waiting for an operator/);

  // A bank refund cannot go to a chain address.
  const toAddress = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`, { to_address: receiver });
  expect(toAddress.status).toBe(400);
  expect(toAddress.body.error.source).toEqual({ location: 'body', key: 'to_address' });
  // The production operator path: the admin CLI (checked the same way), to the source again.
  const retryRefund = (...more: string[]) => runCli(['transfers', 'retry-refund', tr.id, '--operator', 'ops.bob', ...more]);
  const refused = retryRefund('--to-address', receiver);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/only for refunds on chains/);
  const cli = retryRefund();
  expect(cli.stderr).toBe('');
  expect(cli.status).toBe(0);
  const refunded = await waitForTransferState(p.t.api, tr.id, 'refunded');
  expect(refunded).toMatchObject({ return_code: 'R01', state_reason: 'returned by the receiving bank (R01)' });
  const refunds = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data;
  expect(refunds.map((p: any) => p.status).sort()).toEqual(['failed', 'settled']);
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`)).status).toBe(409);
}, 90_000);

/** Waits until the transfer shows a refund the source bank sent back, waiting for an operator. */
async function refundReturned(id: string, code: string) {
  return waitFor(async () => {
    const x = (await p.t.api.get(`/v0/transfers/${id}`)).body;
    return x.state_reason?.startsWith(`refund returned by the source bank (${code})`) ? x : undefined;
  }, { what: `refund returned (${code})` });
}

test('a refund the source bank returns after it settled (.18, then the sandbox route): the transfer stays refunded, the money waits in customer funds for an operator', async () => {
  const tr = (await p.t.api.post('/v0/transfers', achToWire('97.18'))).body;
  await deposit(tr.id);
  await waitForTransferState(p.t.api, tr.id, 'payment_processed');
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R01' })).status).toBe(200);
  await waitForTransferState(p.t.api, tr.id, 'refunded');

  // Halfway through ACH's return window the source bank sends the refund back (R02, account closed).
  const waiting = await refundReturned(tr.id, 'R02');
  expect(waiting).toMatchObject({ state: 'refunded', state_reason: 'refund returned by the source bank (R02); waiting for an operator to retry the refund' });
  const [returnedRefund] = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data;
  expect(returnedRefund).toMatchObject({ status: 'returned', return_code: 'R02', amount: '97.18' });
  const status = await (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`).query(transferStatus);
  expect(status).toMatchObject({ state: 'refunded' });
  expect(status.step).toMatch(/^Refund returned by the source bank \(R02\)\. Waiting for an operator/);
  // The state never left `refunded`; the change of reason is announced.
  const updates = (await p.t.api.get(`/v0/events?object_id=${tr.id}&type=transfer.updated&limit=50`)).body.data.reverse();
  expect(updates.map((e: any) => e.data.state)).toEqual(['funds_received', 'in_review', 'payment_submitted', 'payment_processed', 'returned', 'refunded', 'refunded']);
  expect(updates.at(-1).data.previous_attributes).toEqual({ state_reason: 'returned by the receiving bank (R01)' });

  // An operator retries it; the retried refund, returned through the sandbox route inside its window, waits again.
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`)).status).toBe(200);
  await waitFor(async () => (await p.t.api.get(`/v0/transfers/${tr.id}`)).body.state_reason === 'returned by the receiving bank (R01)', { what: 'second refund settled' });
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R03' })).status).toBe(200);
  await refundReturned(tr.id, 'R03');
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`)).status).toBe(200);
  // Late word of the earlier refunds' returns while the third is watched names those refunds: it does not count for the third.
  const earlier = await testDb().selectFrom('payments').select('provider_payment_id').where('transfer_id', '=', tr.id).where('kind', '=', 'refund')
    .where('status', '=', 'returned').execute();
  expect(earlier).toHaveLength(2);
  const workflow = (await temporalClient()).workflow.getHandle(`transfer:${tr.id}`);
  for (const { provider_payment_id } of earlier) await workflow.signal(refundReturnedSignal, { code: 'R02', railPaymentId: provider_payment_id! });
  await workflow.result();

  const done = (await p.t.api.get(`/v0/transfers/${tr.id}`)).body;
  expect(done).toMatchObject({ state: 'refunded', return_code: 'R01', state_reason: 'returned by the receiving bank (R01)' });
  const refunds = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data.reverse();
  expect(refunds.map((p: any) => [p.status, p.return_code])).toEqual([['returned', 'R02'], ['returned', 'R03'], ['settled', null]]);
  // Each returned refund's ledger legs are reversed; the third one stands.
  const legs = await testDb().selectFrom('ledger_transactions').select('idempotency_key').where('reference_id', '=', tr.id).execute();
  expect(legs.map((l) => l.idempotency_key).sort()).toEqual(
    ['deposit', 'payout', 'payout-reversal', 'refund', 'refund-reversal:1', 'refund:2', 'refund-reversal:2', 'refund:3'].map((k) => `${tr.id}:ledger:${k}`).sort(),
  );
  // The return window has closed: nothing more to return or retry.
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/return`, { code: 'R01' })).status).toBe(409);
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`)).status).toBe(409);
}, 120_000);

test('only a processed payout or a settled fiat refund can be returned', async () => {
  const waitingForFunds = (await p.t.api.post('/v0/transfers', achToWire('21.00'))).body;
  const early = await p.t.api.post(`/v0/sandbox/transfers/${waitingForFunds.id}/return`, { code: 'R01' });
  expect(early.status).toBe(409);
  expect(early.body.error.message).toBe('The transfer is awaiting_funds; only a processed payout or a settled refund can be returned');
  // Canceled before any money arrived: nothing was refunded.
  expect((await p.t.api.delete(`/v0/transfers/${waitingForFunds.id}`)).status).toBe(200);
  const nothing = await p.t.api.post(`/v0/sandbox/transfers/${waitingForFunds.id}/return`, { code: 'R01' });
  expect(nothing.status).toBe(409);
  expect(nothing.body.error.message).toBe('The transfer is canceled and has no settled refund to return');
});

test('a refund the chain refuses (blocked from_address) waits; a retry to the same address is refused again, one to a new address refunds', async () => {
  const tr = (await p.t.api.post('/v0/transfers', {
    amount: '30.15', on_behalf_of: p.us.id,
    source: { payment_rail: 'base', currency: 'usdc', from_address: '0x00000000000000000000000000000000000b10c5' },
    destination: { payment_rail: 'wire', currency: 'usd', external_account_id: p.usAccount.id },
  })).body;
  await deposit(tr.id);
  await waitFor(async () => (await p.t.api.get(`/v0/transfers/${tr.id}`)).body.review_reasons, { what: 'hold' });
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/review`, { decision: 'reject' })).status).toBe(200);
  const waiting = await refundRejected(tr.id);
  expect(waiting.state).toBe('in_review');
  expect(waiting.state_reason).toMatch(/^refund rejected: the chain refused the refund: AddressBlocked/);

  const retried = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`);
  expect(retried.status).toBe(200);
  await waitFor(async () => {
    const refunds = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data;
    return refunds.length === 2 && refunds.every((p: any) => p.status === 'failed') ? refunds : undefined;
  }, { what: 'the second refund refused too' });
  expect((await refundRejected(tr.id)).state).toBe('in_review');
  const refunds = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data;
  expect(refunds.every((p: any) => p.tx_hash === null)).toBe(true);
  // Still the customer's money: deposit in, both refunds reversed.
  const legs = await testDb().selectFrom('ledger_transactions').select('idempotency_key').where('reference_id', '=', tr.id).execute();
  expect(legs.map((l) => l.idempotency_key.slice(tr.id.length + 8)).sort()).toEqual(['deposit', 'refund', 'refund-reversal:1', 'refund-reversal:2', 'refund:2']);

  // Somewhere else: checked first (nothing changes on a bad one), then sent there.
  const badAddress = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`, { to_address: '0x1234' });
  expect(badAddress.status).toBe(400);
  expect(badAddress.body.error.source).toEqual({ location: 'body', key: 'to_address' });
  const bankAccount = await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`, { external_account_id: p.usAccount.id });
  expect(bankAccount.status).toBe(400);
  expect(bankAccount.body.error.source).toEqual({ location: 'body', key: 'external_account_id' });
  expect((await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data).toHaveLength(2);
  const newAddress = freshReceiver();
  const before = await tokenBalance('base', 'usdc', newAddress);
  expect((await p.t.api.post(`/v0/sandbox/transfers/${tr.id}/retry_refund`, { to_address: newAddress })).status).toBe(200);
  const canceled = await waitForTransferState(p.t.api, tr.id, 'canceled');
  expect(canceled.state_reason).toBe('rejected_in_review');
  expect(await tokenBalance('base', 'usdc', newAddress)).toBe(before + 30_150_000n);
  const all = (await p.t.api.get(`/v0/payments?transfer_id=${tr.id}&kind=refund`)).body.data;
  expect(all.map((p: any) => [p.status, p.to_address]).sort()).toEqual([
    ['failed', '0x00000000000000000000000000000000000b10c5'], ['failed', '0x00000000000000000000000000000000000b10c5'], ['settled', newAddress],
  ]);
}, 120_000);
