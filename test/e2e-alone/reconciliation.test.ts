import { parseAmount } from '../../src/domain/money';
import { apiClient, createTenant, runCli, stack, temporalClient, testDb, waitFor, type ApiClient } from '../harness';
import { liveApprovedCustomer, liveVerifiedUsAccount } from '../harness/live-ach';
import { TEST_ODFI } from '../harness/stack';
import { TestBank } from '../harness/test-bank';
import { expectLedgerBalanced, waitForTransferState } from '../harness/transfers';
import type { BookedLine } from '../../src/sandbox-bank/statements';

// The daily reconciliation of the US account (docs/RECONCILIATION.md), end to end: live ACH payouts
// and their deposits through the bank's files, a return; the test bank's BAI2 statement of what it
// booked arrives in its outbox, and the operator's CLI reconciles it against the books. Alone:
// the bank account is every tenant's, and the books' side is everything the platform sent the bank.

let live: ApiClient;
let bank: TestBank;
let customer: { id: string };
let account: { id: string };

beforeAll(async () => {
  live = apiClient((await createTenant()).liveSecret);
  bank = new TestBank(stack().bankRoot!, TEST_ODFI, { takes: ['ach'] }).start();
  customer = await liveApprovedCustomer(live, 'reconciliation-test');
  const verified = await liveVerifiedUsAccount(live, bank, customer.id, '40008880001');
  // The micro-deposits come back in a later file: on the first statement too.
  await verified.recoveryDebit();
  account = verified.account;
}, 120_000);

afterAll(async () => {
  bank.stop();
  await expectLedgerBalanced();
});

/** Payouts of `amounts`, funded by the bank's credits; processed (or returned, for a magic .14). */
async function payoutsOf(amounts: string[]) {
  const transfers = [];
  for (const amount of amounts) {
    const created = await live.post('/v0/transfers', {
      amount, on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
    });
    expect(created.status).toBe(201);
    transfers.push(created.body);
  }
  await bank.writeCredits(transfers.map((t) => ({ amountMinor: parseAmount(t.source_deposit_instructions.amount, 2)!, reference: t.source_deposit_instructions.deposit_reference, senderName: 'JANE DOE' })));
  for (const t of transfers) {
    if (t.amount.endsWith('.14')) await waitFor(async () => (await live.get(`/v0/transfers/${t.id}`)).body.state === 'returned', { what: 'the return', timeoutMs: 90_000 });
    else await waitForTransferState(live, t.id, 'payment_processed', 90_000);
  }
  return transfers;
}

/** The statement the bank writes now, once the platform has read and kept it: its file id. */
async function statement(edit?: (lines: BookedLine[]) => BookedLine[]): Promise<string> {
  const name = bank.writeStatement(edit);
  const file = await waitFor(() => testDb().selectFrom('bank_files').select(['id', 'status']).where('direction', '=', 'inbound').where('name', '=', name).where('status', '=', 'processed').executeTakeFirst(),
    { what: `the statement ${name} read`, timeoutMs: 30_000 });
  return file.id;
}

const reconcile = (fileId: string) => runCli(['reconciliation', 'run', fileId], { RECONCILIATION_CREDIT_SHORTFALL: '5.00' });
const counts = async () => ({
  matches: Number((await testDb().selectFrom('reconciliation_matches').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n),
  exceptions: Number((await testDb().selectFrom('reconciliation_exceptions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n),
});

test('a day of ACH payouts, deposits and a return reconciles with no exception; the same statement again records nothing; the next day a payout the bank left out, a credit nobody expected and a deposit 15.00 short open exactly those 3 exceptions', async () => {
  await payoutsOf(['21.00', '22.00', '23.14', '24.00']);
  // Every file the bank took is on the books' side too: the micro-deposits' too.
  await waitFor(async () => !(await testDb().selectFrom('bank_payments').select('id').where('status', '=', 'queued').where('environment', '=', 'production').executeTakeFirst()),
    { what: 'nothing left to file', timeoutMs: 30_000 });
  const first = await statement();
  const run = reconcile(first);
  expect(run.stderr).toBe('');
  expect(run.stdout).toMatch(new RegExp(`^rrun_\\S+ {2}account ${TEST_ODFI.collectionAccount}: \\d+ matched, 0 exceptions\\n$`));
  const afterFirst = await counts();
  expect(afterFirst.exceptions).toBe(0);
  expect(afterFirst.matches).toBeGreaterThanOrEqual(4 + 1 + 1); // four deposits, a return, a batch at least

  // Delivered again: nothing recorded twice.
  expect(reconcile(first).stdout).toContain('(reconciled before; nothing recorded again)');
  expect(await counts()).toEqual(afterFirst);

  // The next day the bank leaves out the batch of a settled payout, books a credit nobody sent for, and one deposit 15.00 short.
  // (One at a time, so that the 31.00 payout is a batch of its own.)
  await payoutsOf(['31.00']);
  const [short] = await payoutsOf(['32.00']);
  const shortRef = short.source_deposit_instructions.deposit_reference;
  const second = await statement((lines) => [
    ...lines.filter((l) => !(l.direction === 'debit' && l.bai2TypeCode === '469' && l.amountMinor === 3_100n)).map((l) => (l.customerReference === shortRef ? { ...l, amountMinor: l.amountMinor - 1_500n } : l)),
    { direction: 'credit', amountMinor: 9_999n, bankReference: 'SB-SURPRISE', customerReference: 'UNKNOWN', bai2TypeCode: '142', bankTransactionCode: 'PMNT/RCDT/ESCT', text: 'ACH CREDIT FROM NOBODY' },
  ]);
  expect(reconcile(second).stdout).toMatch(/: \d+ matched, 3 exceptions\n$/);
  const opened = await testDb().selectFrom('reconciliation_exceptions').select(['type', 'amount_minor']).where('status', '=', 'open').orderBy('type').execute();
  expect(opened.map((e) => [e.type, e.amount_minor])).toEqual([['amount_mismatch', '1500'], ['missing_from_statement', '3100'], ['unexpected_on_statement', '9999']]);
  const listed = runCli(['reconciliation', 'exceptions']).stdout.trim().split('\n');
  expect(listed).toHaveLength(3);
  expect(listed.find((l) => l.includes('unexpected_on_statement'))).toContain('statement: credit');
}, 420_000);

test("each exception is resolved through the operators' API, audited, the write-offs posted to suspense; the ledger verifies; other developers' keys see no such route", async () => {
  const operators = await createTenant({ operators: true });
  const ops = apiClient(operators.liveSecret);
  expect((await live.get('/v0/reconciliation/exceptions')).status).toBe(404);
  expect((await apiClient(operators.secret).get('/v0/reconciliation/exceptions')).body.data).toEqual([]); // the sandbox's own

  const list = await ops.get('/v0/reconciliation/exceptions?status=open');
  expect(list.status).toBe(200);
  const byType = Object.fromEntries(list.body.data.map((e: any) => [e.type, e]));
  expect(Object.keys(byType).sort()).toEqual(['amount_mismatch', 'missing_from_statement', 'unexpected_on_statement']);
  const missing = byType.missing_from_statement;
  const unexpected = byType.unexpected_on_statement;
  const short = byType.amount_mismatch;
  expect([missing.amount, missing.books_line.direction, missing.statement_line]).toEqual(['31.00', 'debit', null]);
  expect([unexpected.amount, unexpected.statement_line.references[0], unexpected.books_line]).toEqual(['99.99', 'SB-SURPRISE', null]);
  expect([short.amount, short.currency]).toEqual(['15.00', 'usd']);

  const resolve = (id: string, body: object) => ops.post(`/v0/reconciliation/exceptions/${id}/resolve`, body);
  // A payout the bank left out and a credit nobody sent are not the same money.
  const notSame = await resolve(missing.id, { action: 'match', reason: 'same money?', counterpart_exception_id: unexpected.id });
  expect([notSame.status, notSame.body.error.source.key]).toEqual([409, 'counterpart_exception_id']);
  expect((await resolve(missing.id, { action: 'write_off' })).status).toBe(400);

  expect((await resolve(missing.id, { action: 'investigate', reason: 'asked the bank for the batch' })).body.status).toBe('investigating');
  const writtenOff = await resolve(missing.id, { action: 'write_off', reason: 'the bank confirms it never paid the batch' });
  expect([writtenOff.status, writtenOff.body.status, writtenOff.body.resolution]).toEqual([200, 'resolved', 'written_off']);
  // The same write-off asked for twice at once: one posts it, the other finds it resolved.
  const twice = await Promise.all([1, 2].map(() => resolve(unexpected.id, { action: 'write_off', reason: 'held in suspense until the sender is found' })));
  expect(twice.map((r) => r.status).sort()).toEqual([200, 409]);
  expect(twice.find((r) => r.status === 200)!.body.resolution).toBe('written_off');
  expect((await resolve(short.id, { action: 'match', reason: 'the correspondent bank charged 15.00' })).body.resolution).toBe('matched');
  expect((await resolve(short.id, { action: 'write_off', reason: 'again' })).status).toBe(409);

  // The audit: who, when, what, why, and the ledger movement each write-off posted.
  const audited = (await ops.get(`/v0/reconciliation/exceptions/${missing.id}`)).body;
  expect(audited.resolutions.map((r: any) => [r.action, r.operator, r.reason])).toEqual([
    ['investigate', expect.stringMatching(/^key_/), 'asked the bank for the batch'],
    ['write_off', expect.stringMatching(/^key_/), 'the bank confirms it never paid the batch'],
  ]);
  expect(audited.resolutions[1].ledger_transaction_id).toMatch(/\S/);
  await expect(testDb().updateTable('reconciliation_resolutions').set({ reason: 'rewritten' }).execute()).rejects.toThrow(/append-only/);
  expect((await ops.get('/v0/reconciliation/exceptions?status=open')).body.data).toEqual([]);

  // The bank holds 31.00 more (a payout it never paid) and 99.99 more (a credit nobody sent) than the books said: in suspense now.
  const suspense = await testDb().selectFrom('ledger_accounts').select('balance_minor')
    .where('developer_id', '=', 'platform').where('environment', '=', 'production').where('purpose', '=', 'reconciliation_suspense').where('currency', '=', 'usd').executeTakeFirstOrThrow();
  expect(suspense.balance_minor).toBe('13099');
  const writeOffs = await testDb().selectFrom('reconciliation_resolutions').select('ledger_transaction_id').where('exception_id', '=', unexpected.id).execute();
  expect(writeOffs).toHaveLength(1);
}, 60_000);

test('the daily run: scheduled at the configured hours; a day without the statement raises the alarm (search attribute, reconciliation.break to the operators, the report by API and CLI); a day with it reconciles', async () => {
  const client = await temporalClient();
  const schedule = await client.schedule.getHandle('reconciliation:daily').describe();
  expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType: 'dailyReconciliationWorkflow' });
  // At the configured hour (RECONCILIATION_HOURS: the stack's is 08:00 on 29 February, so that none lands among this file's days).
  expect(schedule.spec.calendars?.[0]).toMatchObject({ hour: [{ start: 8, end: 8, step: 1 }], minute: [{ start: 0, end: 0, step: 1 }], dayOfMonth: [{ start: 29, end: 29, step: 1 }] });
  const day = async (name: string) => {
    const workflowId = `test-reconciliation-${name}-${Date.now()}`;
    const result = await client.workflow.execute('dailyReconciliationWorkflow', { taskQueue: stack().taskQueue, workflowId, args: [] }) as { reportId: string; breaks: string[] };
    return { result, workflow: client.workflow.getHandle(workflowId) };
  };
  const ach = TEST_ODFI.collectionAccount;
  // Whatever came before (this file's statements, reconciled already): taken as the start.
  await day('start');
  const operators = await createTenant({ operators: true });
  const ops = apiClient(operators.liveSecret);

  const silent = await day('silent');
  expect(silent.result.breaks).toContain(`statement_missing:${ach}`);
  expect(String((await silent.workflow.describe()).searchAttributes.ReconciliationBreak)).toContain(`statement_missing:${ach}`);
  const report = await ops.get(`/v0/reconciliation/reports/${silent.result.reportId}`);
  expect(report.body.accounts.find((a: any) => a.account === ach)).toMatchObject({ statement_missing: true, statements: [], exceptions_opened: 0 });
  const events = await waitFor(async () => {
    const listed = await ops.get(`/v0/events?type=reconciliation.break&object_id=${silent.result.reportId}`);
    return listed.body.data.length > 0 ? listed.body.data : undefined;
  }, { what: 'the reconciliation.break event' });
  expect(events).toHaveLength(1);
  expect(events[0].data.breaks).toEqual(silent.result.breaks);
  expect((await live.get('/v0/events?type=reconciliation.break')).body.data).toEqual([]);
  const csv = runCli(['reconciliation', 'report', silent.result.reportId]).stdout.trim().split('\n');
  expect(csv[0]).toBe('report,ran_at,account,rail,statements,matched,exceptions_opened,exceptions_open,statement_missing');
  expect(csv.find((l) => l.includes(`,${ach},`))).toMatch(/,ach,,0,0,0,true$/);

  // The next day's statement comes: reconciled, no break for the US account.
  await payoutsOf(['41.00']);
  const file = await statement();
  const next = await day('next');
  expect(next.result.breaks.filter((b) => b.endsWith(`:${ach}`))).toEqual([]);
  const listed = (await ops.get('/v0/reconciliation/reports?limit=1')).body.data[0];
  expect(listed.id).toBe(next.result.reportId);
  expect(listed.accounts.find((a: any) => a.account === ach)).toMatchObject({ statement_missing: false, statements: [file], exceptions_opened: 0 });
  expect(listed.accounts.find((a: any) => a.account === ach).matched).toBeGreaterThanOrEqual(2); // the deposit and its payout's batch
}, 120_000);
