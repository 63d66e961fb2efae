import { sql } from 'kysely';
import { parseAmount } from '../../src/domain/money';
import { Worker } from '@temporalio/worker';
import { apiClient, createTenant, runCli, stack, temporalClient, testDb, waitFor, workflowBundle, type ApiClient } from '../harness';
import fs from 'node:fs';
import path from 'node:path';
import { bankFileWorkerOfItsOwn as ownWorker } from '../harness/own-processes';
import { TEST_ODFI } from '../harness/stack';
import { CORRECTED_ACCOUNT, TestBank, type TakenEntry } from '../harness/test-bank';
import { expectLedgerBalanced, waitForTransferState } from '../harness/transfers';
import { liveApprovedCustomer, liveVerifiedUsAccount } from '../harness/live-ach';
import { StuckActivityAttr } from '../../src/temporal/search-attributes';

// The live ACH rails through the bank's files (docs/BANK_FILES.md), end to end: HTTP → API →
// PostgreSQL → Temporal (the window and outbox schedules) → NACHA files over a real SFTP server →
// the test bank, which checks them as an ODFI does and answers with returns, notifications of
// change and credits in the same format.

let live: ApiClient;
let bank: TestBank;
let customer: { id: string };
let account: { id: string };
const ACCOUNT_NUMBER = '40001234567';

const creditOf = (e: TakenEntry) => ['22', '32'].includes(e.transactionCode);

/** A live US account, verified with the micro-deposits the bank took from our file; its recovery debit filed too. */
async function liveUsAccount(customerId: string, accountNumber: string) {
  const verified = await liveVerifiedUsAccount(live, bank, customerId, accountNumber);
  // The two credits come back in one debit, in a later file.
  expect((await verified.recoveryDebit()).amountMinor).toBe(verified.microDepositsMinor);
  return verified.account;
}

const payout = (amount: string, externalAccountId = account.id) => live.post('/v0/transfers', {
  amount, on_behalf_of: customer.id,
  source: { payment_rail: 'ach', currency: 'usd' },
  destination: { payment_rail: 'ach', currency: 'usd', external_account_id: externalAccountId },
});

/** The deposits of `transfers` arrive as one credit file from the bank, each naming its transfer's deposit reference. */
async function creditsFor(transfers: { source_deposit_instructions: { amount: string; deposit_reference: string } }[]) {
  return bank.writeCredits(transfers.map((tr) => ({
    amountMinor: parseAmount(tr.source_deposit_instructions.amount, 2)!, reference: tr.source_deposit_instructions.deposit_reference, senderName: 'JANE DOE',
  })));
}

let developerId: string;
/** Workflows of this file beside the bank-file ones, for the replay test. */
const otherWorkflows: string[] = [];

beforeAll(async () => {
  const t = await createTenant();
  developerId = t.developerId;
  live = apiClient(t.liveSecret);
  bank = new TestBank(stack().bankRoot!, TEST_ODFI, { takes: ['ach'] }).start();
  customer = await liveApprovedCustomer(live, 'bank-files-test');
  account = await liveUsAccount(customer.id, ACCOUNT_NUMBER);
  otherWorkflows.push(`external-account-verification:${account.id}`);
}, 120_000);

afterAll(async () => {
  bank.stop();
  await expectLedgerBalanced();
});

test('200 live ACH payouts funded by incoming credits go out in one window: one balanced file, read back field by field; a return R01 follows the returned path', async () => {
  const window = (await temporalClient()).schedule.getHandle('bank-files:ach_standard');
  await window.pause('bank-files-ach test: 200 payouts in one window');
  let transfers: any[] = [];
  try {
    for (let i = 0; i < 200; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => payout(`${20 + i + j}.00`)));
      expect(batch.map((r) => r.status)).toEqual(Array(20).fill(201));
      transfers.push(...batch.map((r) => r.body));
    }
    // Live deposit instructions name the platform's account at its bank.
    expect(transfers[0].source_deposit_instructions).toMatchObject({
      bank_name: TEST_ODFI.name, bank_routing_number: TEST_ODFI.routing, bank_account_number: TEST_ODFI.collectionAccount, bank_beneficiary_name: TEST_ODFI.companyName,
    });
    await creditsFor(transfers);
    const ids = transfers.map((tr) => tr.id);
    const queued = await waitFor(async () => {
      const rows = await testDb().selectFrom('bank_payments').selectAll().where('reference', 'in', ids).where('purpose', '=', 'payout').execute();
      return rows.length === 200 && rows.every((r) => r.status === 'queued') ? rows : undefined;
    }, { what: '200 payouts queued for the window', timeoutMs: 240_000 });
    await window.trigger();

    const fileName = (await bank.waitForEntry((e) => e.idNumber === queued[0].entry_ref)).file;
    await window.unpause();
    const inFile = bank.entries.filter((e) => e.file === fileName);
    expect(bank.rejected).toEqual([]);
    expect(inFile).toHaveLength(200);
    const byRef = new Map(inFile.map((e) => [e.idNumber, e]));
    for (const p of queued) {
      expect(byRef.get(p.entry_ref)).toMatchObject({
        transactionCode: '22', routing: '021000021', account: ACCOUNT_NUMBER, amountMinor: BigInt(p.amount_minor), name: 'JANE DOE', secCode: 'PPD', description: 'PAYOUT',
      });
    }
    const file = await testDb().selectFrom('bank_files').selectAll().where('direction', '=', 'outbound').where('name', '=', fileName).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ status: 'uploaded', entry_count: 200, total_debit_minor: '0' });
    expect(BigInt(file.total_credit_minor)).toBe(queued.reduce((s, p) => s + BigInt(p.amount_minor), 0n));

    // Operators see the file, and each payment in it.
    const listed = runCli(['bank-files', 'list']);
    expect(listed.stdout).toContain(`${file.id}  ${file.created_at.toISOString()}  out  ${fileName}  uploaded  200 entries`);
    const shown = runCli(['bank-files', 'show', file.id]);
    expect(shown.stdout.split('\n').filter((l) => l.includes(' payout credit '))).toHaveLength(200);

    transfers = await Promise.all(ids.map((id) => waitForTransferState(live, id, 'payment_processed', 60_000)));
    // The receiving bank sends one back: R01, insufficient funds.
    const returned = queued[7];
    bank.writeReturns([{ entry: byRef.get(returned.entry_ref)!, code: 'R01' }]);
    await waitFor(async () => (await live.get(`/v0/transfers/${returned.reference}`)).body.state !== 'payment_processed', { what: 'the return heard', timeoutMs: 30_000 });
    // The refund goes back over ACH; an incoming credit does not tell the sender's account, so the
    // bank-file rail cannot pay it: rejected (R03) at the next window, it waits for an operator's retry.
    const refund = await waitFor(() => testDb().selectFrom('bank_payments').select(['status', 'code']).where('reference', '=', returned.reference)
      .where('purpose', '=', 'refund').where('status', '=', 'rejected').executeTakeFirst(), { what: 'the refund rejected', timeoutMs: 30_000 });
    expect(refund.code).toBe('R03');
    expect((await live.get(`/v0/transfers/${returned.reference}`)).body.state).toBe('returned');
    const row = await testDb().selectFrom('bank_payments').select(['status', 'code']).where('id', '=', returned.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'returned', code: 'R01' });
    const others = await live.get(`/v0/transfers/${queued[8].reference}`);
    expect(others.body.state).toBe('payment_processed');
  } finally {
    if ((await window.describe()).state.paused) await window.unpause();
  }
}, 480_000); // 200 transfers through the stack: on two loaded cores, a few minutes

test('a window with a payout to José Núñez and one to an account whose routing number no longer passes its check digit: the first goes out as JOSE NUNEZ in a file moov-io/ach validates, the second is set aside (R28, its field named) and not paid; the next window is unaffected', async () => {
  const jose = (await liveVerifiedUsAccount(live, bank, customer.id, '40007770001', 'José Núñez')).account;
  const broken = (await liveVerifiedUsAccount(live, bank, customer.id, '40007770002')).account;
  // Damaged where it is kept (the API refuses a routing number that fails its check digit).
  await testDb().updateTable('external_accounts').set({ routing_number: '021000022' }).where('id', '=', broken.id).execute();
  const good = (await payout('31.00', jose.id)).body;
  const bad = (await payout('32.00', broken.id)).body;
  await creditsFor([good, bad]);
  await waitForTransferState(live, good.id, 'payment_processed', 90_000);
  const setAside = await waitFor(async () => {
    const row = await testDb().selectFrom('bank_payments').selectAll().where('reference', '=', bad.id).where('purpose', '=', 'payout').executeTakeFirst();
    return row?.status === 'rejected' ? row : undefined;
  }, { what: 'the broken payout set aside', timeoutMs: 60_000 });
  expect(setAside).toMatchObject({ code: 'R28', reason: 'routing_number is not a valid ABA routing number (checksum)', file_id: null });
  // Undeliverable, then taken back (its refund to a sender the platform never saw waits for an operator).
  const undeliverable = await waitFor(async () => {
    const events = (await live.get(`/v0/events?type=transfer.undeliverable`)).body.data;
    return events.find((e: any) => e.data.id === bad.id);
  }, { what: 'the broken payout\'s transfer undeliverable', timeoutMs: 60_000 });
  expect(undeliverable.data.state_reason).toBe('rejected by the receiving bank (R28)');
  const paid = bank.entries.filter((e) => e.account === '40007770001' && e.description === 'PAYOUT');
  expect(paid.map((e) => [e.name, e.amountMinor])).toEqual([['JOSE NUNEZ', 3_100n]]);
  expect(bank.entries.some((e) => e.account === '40007770002' && e.description === 'PAYOUT')).toBe(false);
  // Every file the bank took passed moov-io/ach (it refuses one moov refuses), and the next window goes out.
  expect(bank.rejected).toEqual([]);
  const next = (await payout('33.00', jose.id)).body;
  await creditsFor([next]);
  await waitForTransferState(live, next.id, 'payment_processed', 90_000);
}, 240_000);

test('a notification of change C01 corrects the external account, with its event, and the next payout goes to the new number', async () => {
  // .15: the test bank answers the entry with C01 (docs/TRANSFERS.md).
  const first = await payout('30.15');
  expect(first.status).toBe(201);
  await creditsFor([first.body]);
  await waitForTransferState(live, first.body.id, 'payment_processed', 60_000);
  const corrected = await waitFor(async () => {
    const a = (await live.get(`/v0/external-accounts/${account.id}`)).body;
    return a.last4 === CORRECTED_ACCOUNT.slice(-4) ? a : undefined;
  }, { what: 'the account corrected', timeoutMs: 30_000 });
  expect(corrected.routing_number).toBe('021000021');
  const events = (await live.get('/v0/events?type=external_account.updated')).body.data;
  expect(events.map((e: any) => [e.data.id, e.data.last4, e.data.previous_attributes?.last4])).toContainEqual([account.id, '1122', ACCOUNT_NUMBER.slice(-4)]);

  const next = await payout('31.00');
  await creditsFor([next.body]);
  const queued = await waitFor(() => testDb().selectFrom('bank_payments').select('entry_ref').where('reference', '=', next.body.id).where('purpose', '=', 'payout').executeTakeFirst(),
    { what: 'the next payout queued', timeoutMs: 30_000 });
  const entry = await bank.waitForEntry((e) => e.idNumber === queued.entry_ref);
  expect(entry.account).toBe(CORRECTED_ACCOUNT);
  await waitForTransferState(live, next.body.id, 'payment_processed', 60_000);
}, 120_000);

test('an incoming credit that names no transfer is held for operators; one for a transfer funds it', async () => {
  const tr = await payout('42.00');
  await bank.writeCredits([
    { amountMinor: 4_200n, reference: tr.body.source_deposit_instructions.deposit_reference, senderName: 'JANE DOE' },
    { amountMinor: 999n, reference: 'FPNOSUCHREF000', senderName: 'SOMEBODY ELSE' },
  ]);
  await waitForTransferState(live, tr.body.id, 'payment_processed', 60_000);
  const unmatched = await waitFor(async () => testDb().selectFrom('rail_events').select(['outcome']).where(sql`payload::text`, 'like', '%FPNOSUCHREF000%').executeTakeFirst(),
    { what: 'the unmatched credit recorded' });
  expect(unmatched.outcome).toBe('unmatched');
}, 120_000);

test('the bank\'s server refusing uploads during a window raises the stuck-activity alarm; the worker SIGKILLed between recording the file and uploading it: the same file goes out once, when the server is back', async () => {
  const client = await temporalClient();
  const schedule = client.schedule.getHandle('bank-files:ach_standard');
  await schedule.pause('bank-files-ach test: a window of its own worker');
  const worker = ownWorker('bank-crash');
  const { taskQueue } = worker;
  const inbox = path.join(stack().bankRoot!, 'inbox');
  const restoreInbox = () => {
    if (fs.statSync(inbox).isFile()) {
      fs.rmSync(inbox);
      fs.renameSync(`${inbox}.away`, inbox);
    }
  };
  try {
    await worker.ready();
    const created = await Promise.all(['51.00', '52.00', '53.00'].map((a) => payout(a)));
    await creditsFor(created.map((r) => r.body));
    const ids = created.map((r) => r.body.id);
    const queued = await waitFor(async () => {
      const rows = await testDb().selectFrom('bank_payments').select(['id', 'entry_ref', 'status']).where('reference', 'in', ids).where('purpose', '=', 'payout').execute();
      return rows.length === 3 && rows.every((r) => r.status === 'queued') ? rows : undefined;
    }, { what: 'three payouts queued', timeoutMs: 60_000 });

    // The bank's inbox cannot be written: every upload fails, and is tried again.
    fs.renameSync(inbox, `${inbox}.away`);
    fs.writeFileSync(inbox, '');
    // Retries a second apart (BANK_UPLOAD_RETRY_MAX_SECONDS=1): the alarm rises after 8 tries.
    const handle = await client.workflow.start('achFileWindowWorkflow', {
      taskQueue, workflowId: `ach-window-crash-${Date.now()}`, args: [{ window: 'ach_standard', uploadRetryMaxSeconds: 1 }],
    });
    await waitFor(async () => (await handle.describe()).typedSearchAttributes.get(StuckActivityAttr) === 'uploadBankFile',
      { what: 'the stuck-activity alarm on the upload', timeoutMs: 60_000, intervalMs: 500 });
    // Past the alarm the upload goes on failing, and being tried again.
    const failing = await waitFor(async () => (await handle.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'uploadBankFile' && a.lastFailure?.message),
      { what: 'the upload still failing past its alarm', timeoutMs: 30_000, intervalMs: 500 });
    expect(failing.lastFailure!.message).toBeTruthy();
    const listed = await waitFor(async () => {
      const out = runCli(['workflows', 'stuck']);
      return out.stdout.includes(handle.workflowId) ? out.stdout : undefined;
    }, { what: 'the window listed by `workflows stuck`', timeoutMs: 30_000, intervalMs: 1_000 });
    expect(listed).toMatch(new RegExp(`${handle.workflowId}  achFileWindowWorkflow  started \\S+  retrying: uploadBankFile`));
    const recorded = await testDb().selectFrom('bank_files').select(['id', 'name', 'status']).where('window_id', '=', handle.workflowId).executeTakeFirstOrThrow();
    expect(recorded.status).toBe('recorded');

    await worker.kill();
    restoreInbox();
    worker.restart();
    expect(await handle.result()).toEqual({ file: recorded.name, payments: 3 });
    expect((await handle.describe()).typedSearchAttributes.get(StuckActivityAttr)).toBeUndefined();

    await bank.waitForEntry((e) => e.idNumber === queued[0].entry_ref);
    const taken = bank.entries.filter((e) => queued.some((q) => q.entry_ref === e.idNumber));
    expect(taken.map((e) => e.file)).toEqual([recorded.name, recorded.name, recorded.name]);
    const filed = await testDb().selectFrom('bank_file_payments').select('file_id').where('payment_id', 'in', queued.map((q) => q.id)).execute();
    expect(filed.map((f) => f.file_id)).toEqual([recorded.id, recorded.id, recorded.id]);
    for (const id of ids) await waitForTransferState(live, id, 'payment_processed', 60_000);

    // An operator's resend of a file the bank still has sends nothing new: same name, same bytes.
    const resent = runCli(['bank-files', 'resend', recorded.id]);
    expect(resent.status).toBe(0);
    const resendWorkflow = /workflow (bank-file-resend:\S+)\)/.exec(resent.stdout)![1];
    expect(await client.workflow.getHandle(resendWorkflow).result()).toEqual({ uploaded: false });
    expect(fs.readdirSync(inbox).filter((n) => n === recorded.name)).toHaveLength(1);
  } finally {
    restoreInbox();
    if ((await schedule.describe()).state.paused) await schedule.unpause();
    await worker.stop();
  }
}, 240_000);

test('the worker SIGKILLed while it applies the bank\'s files: each credit funds its transfer once, the return is applied once', async () => {
  const client = await temporalClient();
  const outbox = client.schedule.getHandle('bank-files:outbox');
  const worker = ownWorker('bank-outbox-crash');
  try {
    await worker.ready();
    // A payout in its return window, to be returned; and 150 transfers awaiting their deposits.
    const paid = (await payout('61.00')).body;
    await creditsFor([paid]);
    await waitForTransferState(live, paid.id, 'payment_processed', 60_000);
    const paidEntry = await waitFor(() => testDb().selectFrom('bank_payments').select('entry_ref').where('reference', '=', paid.id).where('purpose', '=', 'payout').executeTakeFirst());
    await outbox.pause('bank-files-ach test: the outbox read by a worker of its own');
    // Small amounts: the customer's 24-hour total stays under the velocity limit, after the 200 payouts above.
    const awaiting: any[] = [];
    for (let i = 0; i < 150; i += 25) awaiting.push(...(await Promise.all(Array.from({ length: 25 }, (_, j) => payout(`${2 + ((i + j) % 40)}.00`)))).map((r) => r.body));
    const creditsFile = await creditsFor(awaiting);
    bank.writeReturns([{ entry: await bank.waitForEntry((e) => e.idNumber === paidEntry.entry_ref), code: 'R02' }]);

    const run = await client.workflow.start('readBankOutboxWorkflow', { taskQueue: worker.taskQueue, workflowId: `bank-outbox-crash-${Date.now()}` });
    // Killed once the credits file is recorded and some, not all, of its deposits are handled.
    const handledAtKill = await waitFor(async () => {
      const { n } = await testDb().selectFrom('rail_events').select((eb) => eb.fn.countAll<string>().as('n'))
        .where('id', 'like', `bankfile:${creditsFile}:%`).where('outcome', 'is not', null).executeTakeFirstOrThrow();
      return Number(n) >= 10 ? Number(n) : undefined;
    }, { what: 'the credits file half applied', timeoutMs: 60_000, intervalMs: 20 });
    await worker.kill();
    expect(handledAtKill).toBeLessThan(150);
    worker.restart();
    await run.result();

    for (const tr of awaiting) await waitForTransferState(live, tr.id, 'payment_processed', 60_000);
    const deposits = await testDb().selectFrom('payments').select(['transfer_id']).where('transfer_id', 'in', awaiting.map((tr) => tr.id)).where('kind', '=', 'deposit').execute();
    expect(deposits).toHaveLength(150);
    const events = await testDb().selectFrom('rail_events').select(['id', 'outcome']).where('id', 'like', `bankfile:${creditsFile}:%`).execute();
    expect(events).toHaveLength(150);
    expect(new Set(events.map((e) => e.outcome))).toEqual(new Set(['deposit_received']));
    const returned = await waitForTransferState(live, paid.id, 'returned', 60_000);
    expect(returned.state).toBe('returned');
    const returnedEvents = await live.get(`/v0/events?type=transfer.returned`);
    expect(returnedEvents.body.data.filter((e: any) => e.data.id === paid.id)).toHaveLength(1);
    const files = await testDb().selectFrom('bank_files').select(['name', 'status']).where('direction', '=', 'inbound').where('name', '=', creditsFile).execute();
    expect(files).toEqual([{ name: creditsFile, status: 'processed' }]);
  } finally {
    if ((await outbox.describe()).state.paused) await outbox.unpause();
    await worker.stop();
  }
}, 300_000);

test('a file the bank refuses stays unpaid, its payments pending, until an operator resends it; then it is paid once', async () => {
  bank.refuseNextFile('the ODFI could not process the file: resend after 15:00');
  const created = await Promise.all(['71.00', '72.00'].map((a) => payout(a)));
  await creditsFor(created.map((r) => r.body));
  const ids = created.map((r) => r.body.id);
  const file = await waitFor(async () => {
    const row = await testDb().selectFrom('bank_payments as p').innerJoin('bank_files as f', 'f.id', 'p.file_id')
      .select(['f.id', 'f.name', 'f.status', 'f.detail']).where('p.reference', '=', ids[0]).where('p.purpose', '=', 'payout').executeTakeFirst();
    return row?.status === 'rejected' ? row : undefined;
  }, { what: 'the file rejected by the bank', timeoutMs: 60_000 });
  expect(file.detail).toContain('resend after 15:00');
  // Past their settlement time, the payouts are still not paid.
  await new Promise((r) => setTimeout(r, 5_000));
  for (const id of ids) expect((await live.get(`/v0/transfers/${id}`)).body.state).toBe('payment_submitted');

  expect(runCli(['bank-files', 'resend', file.id]).status).toBe(0);
  for (const id of ids) await waitForTransferState(live, id, 'payment_processed', 60_000);
  // Settled by their time, which had passed: the bank's next look at its inbox may come a moment later.
  await bank.waitForEntry((e) => e.file === file.name);
  expect(bank.entries.filter((e) => e.file === file.name)).toHaveLength(2);
  const filed = await testDb().selectFrom('bank_file_payments').select('file_id').where('file_id', '=', file.id).execute();
  expect(filed).toHaveLength(2);
}, 180_000);

test('a micro-deposit the receiving bank returns (R03, no such account) fails the verification at once', async () => {
  const number = '40009999999';
  const created = await live.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'us_bank_account', account_name: 'Nobody', routing_number: '021000021', account_number: number,
  });
  expect(created.status).toBe(201);
  const entry = await bank.waitForEntry((e) => e.account === number && e.description === 'ACCTVERIFY' && creditOf(e));
  bank.writeReturns([{ entry, code: 'R03' }]);
  const failed = await waitFor(async () => {
    const a = (await live.get(`/v0/external-accounts/${created.body.id}`)).body;
    return a.status === 'verification_failed' ? a : undefined;
  }, { what: 'the verification failed', timeoutMs: 60_000 });
  expect(failed.failure_reason).toBe('micro_deposit_returned_R03');
  otherWorkflows.push(`external-account-verification:${created.body.id}`);
}, 120_000);

test('the bank-file workflows\' histories replay against the current code', async () => {
  const client = await temporalClient();
  const ids: string[] = [];
  for (const type of ['achFileWindowWorkflow', 'readBankOutboxWorkflow', 'bankFileUploadWorkflow']) {
    const done: { id: string; didSomething: boolean }[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowType = '${type}' AND ExecutionStatus = 'Completed'` })) {
      done.push({ id: `${type}:${w.workflowId}`, didSomething: Boolean((w.memo as { file?: string } | undefined)?.file) });
    }
    // Windows that made a file first, then one that found nothing; up to five of each type.
    ids.push(...done.sort((x, y) => Number(y.didSomething) - Number(x.didSomething)).slice(0, 5).map((d) => d.id));
  }
  expect(ids.filter((i) => i.startsWith('achFileWindowWorkflow')).length).toBeGreaterThanOrEqual(2);
  expect(ids.some((i) => i.startsWith('readBankOutboxWorkflow'))).toBe(true);
  expect(ids.some((i) => i.startsWith('bankFileUploadWorkflow'))).toBe(true);
  // The live micro-deposit verifications: one verified through files, one failed by a returned micro-deposit.
  ids.push(...otherWorkflows.map((id) => `microDepositVerificationWorkflow:${id}`));
  const histories = await Promise.all(ids.map(async (id) => {
    const workflowId = id.slice(id.indexOf(':') + 1);
    return { workflowId, history: await client.workflow.getHandle(workflowId).fetchHistory() };
  }));
  let replayed = 0;
  for await (const result of Worker.runReplayHistories(workflowBundle(), histories)) {
    expect([result.workflowId, result.error]).toEqual([result.workflowId, undefined]);
    replayed++;
  }
  expect(replayed).toBe(ids.length);
});

test('live payments reached the bank\'s files, never the simulator', async () => {
  const count = async (table: 'rail_payments' | 'bank_payments') => Number((await testDb().selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n'))
    .where('developer_id', '=', developerId).where('environment', '=', 'production').executeTakeFirstOrThrow()).n);
  expect(await count('rail_payments')).toBe(0);
  expect(await count('bank_payments')).toBeGreaterThan(0);
});
