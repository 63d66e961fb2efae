import { createTenant, temporalClient, testDb, waitFor, type Tenant } from '../harness';
import { approvedCustomer, expectLedgerBalanced, internationalAccount, sandboxDeposit } from '../harness/transfers';
import { setStateReason, recordPayoutSettledAtOnce, recordTransferSteps } from '../../src/transfers/steps';
import { postTransaction } from '../../src/ledger/ledger';
import { depositPostings } from '../../src/domain/transfers';
import { transferMoney } from '../../src/transfers/transfer';

// A payout that settled as it was sent is recorded on the row its activity just wrote, as one
// statement made only if nobody changed the row meanwhile; otherwise under the row's lock. Driven on
// transfers held in review (their workflows wait for an operator, so only this test moves them).

let t: Tenant;
beforeAll(async () => {
  t = await createTenant();
});
afterEach(expectLedgerBalanced);

/** A Brazilian customer and the account its PIX transfers pay. */
async function pixPayer() {
  const br = await approvedCustomer(t.api, 'BR');
  const account = await internationalAccount(t.api, br.id, 'BR1800360305000010009795493C1', 'BRASBRRJ', 'BR', 'Maria Silva');
  return { br, account };
}

/** A PIX → PIX transfer (of a new Brazilian customer unless `payer`), as the API answers its creation. */
async function pixTransfer(amount: string, payer?: Awaited<ReturnType<typeof pixPayer>>) {
  const { br, account } = payer ?? await pixPayer();
  return (await t.api.post('/v0/transfers', {
    amount, on_behalf_of: br.id, source: { payment_rail: 'pix', currency: 'brl' },
    destination: { payment_rail: 'pix', currency: 'brl', external_account_id: account.id },
  })).body;
}

/** A PIX transfer funded and held in review (sandbox amounts ending in .15), moved on to payment_submitted as its payout activity would. */
async function submittedPixTransfer(amount: string) {
  const tr = await pixTransfer(amount);
  await sandboxDeposit(t.api, tr.id);
  await waitFor(async () => (await t.api.get(`/v0/transfers/${tr.id}`)).body.review_reasons, { what: 'the hold' });
  const { transfer } = await recordTransferSteps(testDb(), tr.id, [{ step: 'payment_submitted' }]);
  expect(transfer.state).toBe('payment_submitted');
  return transfer;
}

async function stopWorkflow(transferId: string) {
  await (await temporalClient()).workflow.getHandle(`transfer:${transferId}`).terminate('moved on by the test');
}

async function recordedOutcome(transferId: string) {
  const payout = await testDb().selectFrom('payments').selectAll().where('transfer_id', '=', transferId).where('kind', '=', 'payout').executeTakeFirstOrThrow();
  const processedEvents = (await t.api.get(`/v0/events?object_id=${transferId}&type=transfer.payment_processed`)).body.data;
  const row = await testDb().selectFrom('transfers').select(['state', 'state_reason']).where('id', '=', transferId).executeTakeFirstOrThrow();
  return { payout, processedEvents, row };
}

test('on the row as its activity left it: processed, the payout sent and settled, one event; recorded again, nothing changes', async () => {
  const known = await submittedPixTransfer('31.15');
  const sent = { providerPaymentId: 'rp_test_at_once', settlesAt: new Date() };
  expect(await recordPayoutSettledAtOnce(testDb(), known, sent)).toEqual({ state: 'payment_processed' });
  // A retried activity holds the same row: the statement finds it changed and the locked path records nothing twice.
  expect(await recordPayoutSettledAtOnce(testDb(), known, sent)).toEqual({ state: 'payment_processed' });
  const { payout, processedEvents, row } = await recordedOutcome(known.id);
  expect(row.state).toBe('payment_processed');
  expect(payout).toMatchObject({ status: 'settled', provider_payment_id: 'rp_test_at_once', attempts: 1 });
  expect(processedEvents).toHaveLength(1);
  await stopWorkflow(known.id);
});

test('on a row changed meanwhile: nothing is written on the stale row; recorded under the lock, keeping the change', async () => {
  const known = await submittedPixTransfer('32.15');
  // Another writer changes the row after the activity read it.
  await testDb().transaction().execute(async (trx) => {
    const locked = await trx.selectFrom('transfers').selectAll().where('id', '=', known.id).forUpdate().executeTakeFirstOrThrow();
    await setStateReason(trx, locked, 'changed by another writer');
  });
  expect(await recordPayoutSettledAtOnce(testDb(), known, { providerPaymentId: 'rp_test_changed', settlesAt: new Date() })).toEqual({ state: 'payment_processed' });
  const { payout, processedEvents, row } = await recordedOutcome(known.id);
  expect(row).toEqual({ state: 'payment_processed', state_reason: 'changed by another writer' });
  expect(payout).toMatchObject({ status: 'settled', provider_payment_id: 'rp_test_changed', attempts: 1 });
  expect(processedEvents).toHaveLength(1);
  // The event shows the row as it was when it moved, the other writer's change included.
  expect(processedEvents[0].data.state_reason).toBe('changed by another writer');
  await stopWorkflow(known.id);
});

/** A PIX transfer awaiting its deposit, its workflow stopped (only this test moves it), read as an activity reads it. */
async function awaitingPixTransfer(amount: string, payer?: Awaited<ReturnType<typeof pixPayer>>) {
  const tr = await pixTransfer(amount, payer);
  await stopWorkflow(tr.id);
  return testDb().selectFrom('transfers').selectAll().where('id', '=', tr.id).executeTakeFirstOrThrow();
}

const depositToPayout = [
  { step: 'funds_received' as const, railPaymentId: 'rp_test_deposit' }, { step: 'in_review' as const }, { step: 'payment_submitted' as const },
];

/** What the steps wrote: the transfer's payments, its ledger movements and its state events. */
async function writtenFor(transferId: string) {
  const payments = await testDb().selectFrom('payments').select(['kind', 'status']).where('transfer_id', '=', transferId).orderBy('id').execute();
  const movements = await testDb().selectFrom('ledger_transactions as l').innerJoin('ledger_entries as e', 'e.transaction_id', 'l.id')
    .select(['l.idempotency_key']).select((eb) => eb.fn.countAll<string>().as('entries')).where('l.reference_id', '=', transferId)
    .groupBy('l.idempotency_key').orderBy('l.idempotency_key').execute();
  const events = await testDb().selectFrom('events').select('type').where('object_id', '=', transferId).where('type', '<>', 'transfer.updated').orderBy('created_at').execute();
  const row = await testDb().selectFrom('transfers').select(['state', 'state_reason']).where('id', '=', transferId).executeTakeFirstOrThrow();
  return { payments, movements: movements.map((m) => [m.idempotency_key.split(':ledger:')[1], Number(m.entries)]), events: events.map((e) => e.type), row };
}

/** The deposit and the payout recorded once each: their payments, movements and state events. */
async function expectDepositToPayoutOnce(transferId: string) {
  const written = await writtenFor(transferId);
  expect(written.payments).toEqual([{ kind: 'deposit', status: 'settled' }, { kind: 'payout', status: 'pending' }]);
  expect(written.movements).toEqual([['deposit', written.movements[0]![1]], ['payout', written.movements[1]![1]]]);
  expect(written.events).toEqual(['transfer.created', 'transfer.funds_received', 'transfer.in_review', 'transfer.payment_submitted']);
  return written;
}

/** A transfer awaiting its deposit, of a customer whose first transfer has taken and paid out its own (its ledger accounts exist). */
async function secondTransferOf(amounts: [string, string]) {
  const payer = await pixPayer();
  const first = await awaitingPixTransfer(amounts[0], payer);
  await recordTransferSteps(testDb(), first.id, depositToPayout, first);
  return awaitingPixTransfer(amounts[1], payer);
}

test('steps recorded on the transfer as loaded: the deposit and the payout with their ledger movements, once; again on the same stale row, nothing twice', async () => {
  const loaded = await awaitingPixTransfer('33.00');
  const { transfer } = await recordTransferSteps(testDb(), loaded.id, depositToPayout, loaded);
  expect(transfer.state).toBe('payment_submitted');
  const written = await writtenFor(loaded.id);
  expect(written.payments).toEqual([{ kind: 'deposit', status: 'settled' }, { kind: 'payout', status: 'pending' }]);
  expect(written.movements.map(([what]) => what)).toEqual(['deposit', 'payout']);
  expect(written.events).toEqual(['transfer.created', 'transfer.funds_received', 'transfer.in_review', 'transfer.payment_submitted']);
  // A retried activity holding the row it read first: the row has moved on, so it is recorded under
  // the lock, where every step finds itself recorded.
  expect((await recordTransferSteps(testDb(), loaded.id, depositToPayout, loaded)).state).toBe('payment_submitted');
  expect(await writtenFor(loaded.id)).toEqual(written);
});

test('steps on a transfer changed after it was loaded: nothing is written on the stale row; recorded under the lock, once', async () => {
  const loaded = await awaitingPixTransfer('34.00');
  await testDb().transaction().execute(async (trx) => {
    const locked = await trx.selectFrom('transfers').selectAll().where('id', '=', loaded.id).forUpdate().executeTakeFirstOrThrow();
    await setStateReason(trx, locked, 'changed by another writer');
  });
  const { transfer } = await recordTransferSteps(testDb(), loaded.id, depositToPayout, loaded);
  expect(transfer.state).toBe('payment_submitted');
  await expectDepositToPayoutOnce(loaded.id);
  // The other writer's change came first and is shown in its own transfer.updated; the deposit then clears it.
  const reasons = await testDb().selectFrom('events').select('data').where('object_id', '=', loaded.id).where('type', '=', 'transfer.updated').orderBy('created_at').execute();
  expect(reasons.map((e) => (e.data as { state_reason: string | null }).state_reason).slice(0, 2)).toEqual(['changed by another writer', null]);
});

test('steps of a customer\'s second transfer, its ledger accounts there: the row, its events, the payments and the movements in one statement, once', async () => {
  const second = await secondTransferOf(['35.00', '36.00']);
  const { transfer } = await recordTransferSteps(testDb(), second.id, depositToPayout, second);
  expect(transfer.state).toBe('payment_submitted');
  const written = await expectDepositToPayoutOnce(second.id);
  expect(written.row).toEqual({ state: 'payment_submitted', state_reason: null });
});

test('a movement of the steps recorded before: the one statement is undone as a whole; under the lock the steps are recorded, that movement once', async () => {
  const loaded = await secondTransferOf(['37.00', '38.00']);
  // The deposit's movement is there already (another writer recorded it): the statement cannot
  // write both movements, so it writes nothing.
  await testDb().transaction().execute((trx) => postTransaction(trx, { developerId: loaded.developer_id, environment: loaded.environment }, {
    idempotencyKey: `${loaded.id}:ledger:deposit`, description: 'transfer deposit', referenceId: loaded.id, postings: depositPostings(transferMoney(loaded)),
  }));
  const { transfer } = await recordTransferSteps(testDb(), loaded.id, depositToPayout, loaded);
  expect(transfer.state).toBe('payment_submitted');
  await expectDepositToPayoutOnce(loaded.id);
});
