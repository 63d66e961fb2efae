import pg from 'pg';
import { formatAmount, parseAmount } from '../../src/domain/money';
import { postTransaction } from '../../src/ledger/ledger';
import { apiClient, createTenant, documents, individual, runCli, stack, temporalClient, testDb, waitFor, waitForKycStatus, type ApiClient } from '../harness';
import { liveApprovedCustomer, liveVerifiedUsAccount } from '../harness/live-ach';
import { bankFileWorkerOfItsOwn } from '../harness/own-processes';
import { TEST_MNEMONIC, TEST_ODFI, TEST_SEPA_ACCOUNT } from '../harness/stack';
import { CLOSED_IBAN, TestBank } from '../harness/test-bank';
import { chainKeys, chainUrl, expectLedgerBalanced, fundedCustomerWallet, RECEIVER, waitForTransferState } from '../harness/transfers';
import type { BookedLine } from '../../src/sandbox-bank/statements';
import { generateKeyPairSigner } from '@solana/kit';
import { getCreateAssociatedTokenIdempotentInstructionAsync, getMintToCheckedInstruction } from '@solana-program/token';
import { createPublicClient, createTestClient, http } from 'viem';
import { SolanaKeys } from '../../src/chains/solana/keys';
import { SolanaNode } from '../../src/chains/solana/node';
import { signInstructions, signTokenTransfer } from '../../src/chains/solana/transactions';

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
  bank = new TestBank(stack().bankRoot!, TEST_ODFI, { sepaIban: TEST_SEPA_ACCOUNT.iban }).start();
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
  const transfers: any[] = [];
  // Ten clients at a time, as a payment team's would.
  for (let i = 0; i < amounts.length; i += 10) {
    transfers.push(...await Promise.all(amounts.slice(i, i + 10).map(async (amount) => {
      const created = await live.post('/v0/transfers', {
        amount, on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' },
        destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
      });
      expect(created.status).toBe(201);
      return created.body;
    })));
  }
  await bank.writeCredits(transfers.map((t) => ({ amountMinor: parseAmount(t.source_deposit_instructions.amount, 2)!, reference: t.source_deposit_instructions.deposit_reference, senderName: 'JANE DOE' })));
  for (const t of transfers) {
    if (t.amount.endsWith('.14')) await waitFor(async () => (await live.get(`/v0/transfers/${t.id}`)).body.state === 'returned', { what: 'the return', timeoutMs: 180_000 });
    else await waitForTransferState(live, t.id, 'payment_processed', 180_000);
  }
  return transfers;
}

/** The statement the bank writes now (the US account's, or the SEPA account's), once the platform has read and kept it: its file id. */
async function statement(edit?: (lines: BookedLine[]) => BookedLine[], account: 'us' | 'sepa' = 'us'): Promise<string> {
  const name = account === 'us' ? bank.writeStatement(edit) : bank.writeSepaStatement(edit);
  const file = await waitFor(() => testDb().selectFrom('bank_files').select(['id', 'status']).where('direction', '=', 'inbound').where('name', '=', name).where('status', '=', 'processed').executeTakeFirst(),
    { what: `the statement ${name} read`, timeoutMs: 30_000 });
  return file.id;
}

const reconcile = (fileId: string) => runCli(['reconciliation', 'run', fileId], { RECONCILIATION_CREDIT_SHORTFALL: '5.00' });
const counts = async () => ({
  matches: Number((await testDb().selectFrom('reconciliation_matches').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n),
  exceptions: Number((await testDb().selectFrom('reconciliation_exceptions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n),
});

test('a day of 200 ACH payouts, their deposits, 3 returns and a NOC reconciles with no exception, the closing balance the books\' position; the same statement again records nothing; the next day a payout the bank left out, a credit nobody expected and a deposit 15.00 short open exactly those 3 exceptions', async () => {
  // Magic amounts: .14 comes back (R01), .15 brings a notification of change (C01), which moves no money.
  const plain = Array.from({ length: 196 }, (_, i) => `${20 + i}.00`);
  const day = await payoutsOf([...plain.slice(0, 3), '23.14', '25.14', '26.14', '27.15', ...plain.slice(3)]);
  expect(day).toHaveLength(200);
  expect(day.filter((t) => t.amount.endsWith('.14'))).toHaveLength(3);
  await waitFor(() => testDb().selectFrom('bank_files').select('id').where('direction', '=', 'inbound').where('detail', 'like', '%, 1 notifications of change%').executeTakeFirst(),
    { what: 'the notification of change read' });
  // Every file the bank took is on the books' side too: the micro-deposits' too.
  await waitFor(async () => !(await testDb().selectFrom('bank_payments').select('id').where('status', '=', 'queued').where('environment', '=', 'production').executeTakeFirst()),
    { what: 'nothing left to file', timeoutMs: 30_000 });
  const first = await statement();
  const run = reconcile(first);
  expect(run.stderr).toBe('');
  // The closing balance is the books' position: the clearing accounts' (every tenant's), the micro-deposits and their recovery included.
  expect(run.stdout).toMatch(new RegExp(`^rrun_\\S+ {2}account ${TEST_ODFI.collectionAccount}: \\d+ matched, 0 exceptions, closing balance agrees with the books\\n$`));
  const afterFirst = await counts();
  expect(afterFirst.exceptions).toBe(0);
  expect(afterFirst.matches).toBeGreaterThanOrEqual(200 + 3 + 1); // 200 deposits, three returns, a batch at least

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
  // The three exceptions explain the closing balance's difference from the books: no break of its own.
  expect(reconcile(second).stdout).toMatch(/: \d+ matched, 3 exceptions, closing balance agrees with the books\n$/);
  const closings = await testDb().selectFrom('reconciliation_runs').select(['statement_closing_minor', 'books_minor', 'explained_minor', 'balance_difference_minor'])
    .where('statement_file_id', 'in', [first, second]).orderBy('created_at').execute();
  expect(closings.map((r) => [r.explained_minor, r.balance_difference_minor])).toEqual([['0', '0'], [String(3_100 + 9_999 - 1_500), '0']]);
  expect(BigInt(closings[1]!.statement_closing_minor!)).toBe(BigInt(closings[1]!.books_minor!) + 3_100n + 9_999n - 1_500n);
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
  expect(csv[0]).toBe('report,ran_at,account,rail,statements,matched,exceptions_opened,exceptions_open,statement_missing,closing_balance_difference');
  expect(csv.find((l) => l.includes(`,${ach},`))).toMatch(/,ach,,0,0,0,true,$/);

  // The next day's statement comes: reconciled, no break for the US account.
  await payoutsOf(['41.00']);
  const file = await statement();
  const next = await day('next');
  expect(next.result.breaks.filter((b) => b.endsWith(`:${ach}`))).toEqual([]);
  const listed = (await ops.get('/v0/reconciliation/reports?limit=1')).body.data[0];
  expect(listed.id).toBe(next.result.reportId);
  expect(listed.accounts.find((a: any) => a.account === ach)).toMatchObject({ statement_missing: false, statements: [file], exceptions_opened: 0 });
  expect(listed.accounts.find((a: any) => a.account === ach).matched).toBeGreaterThanOrEqual(2); // the deposit and its payout's batch
  expect(listed.accounts.find((a: any) => a.account === ach).closing_balance_difference).toBe('0.00');

  // The books credit 10.00 the bank never received (a deposit posted twice, say): the next closing balance is 10.00 short of them.
  await testDb().transaction().execute((trx) => postTransaction(trx, { developerId: 'platform', environment: 'production' }, {
    idempotencyKey: `test-invented-deposit-${Date.now()}`, description: 'a deposit the bank never received',
    postings: [
      { account: { ownerType: 'platform', ownerId: 'ach', purpose: 'rail_clearing', currency: 'usd' }, amountMinor: -1_000n },
      { account: { ownerType: 'platform', ownerId: 'ach', purpose: 'reconciliation_suspense', currency: 'usd' }, amountMinor: 1_000n },
    ],
  }));
  await payoutsOf(['42.00']);
  await statement();
  const short = await day('short');
  expect(short.result.breaks.filter((b) => b.endsWith(`:${ach}`))).toEqual([`closing_balance:${ach}`]);
  const shortReport = (await ops.get(`/v0/reconciliation/reports/${short.result.reportId}`)).body;
  expect(shortReport.accounts.find((a: any) => a.account === ach)).toMatchObject({ exceptions_opened: 0, closing_balance_difference: '-10.00' });
  const [difference] = (await ops.get(`/v0/reconciliation/exceptions?account=${ach}&type=balance_difference&status=open`)).body.data;
  expect(difference).toMatchObject({ account: ach, amount: '10.00', currency: 'usd', statement_line: { direction: 'debit', amount: '10.00' }, books_line: null });
  // Written off, the books agree with the bank again, and the next day has no break.
  const writeOff = await ops.post(`/v0/reconciliation/exceptions/${difference.id}/resolve`, { action: 'write_off', reason: 'the duplicate deposit, reversed' });
  expect([writeOff.status, writeOff.body.resolution]).toEqual([200, 'written_off']);
  await payoutsOf(['43.00']);
  await statement();
  const agreed = await day('agreed');
  expect(agreed.result.breaks.filter((b) => b.endsWith(`:${ach}`))).toEqual([]);
  expect((await ops.get(`/v0/reconciliation/reports/${agreed.result.reportId}`)).body.accounts.find((a: any) => a.account === ach).closing_balance_difference).toBe('0.00');
}, 240_000);

test('the SEPA account: payouts, one returned and one rejected by pain.002, and a deposit, read from its camt.053, reconcile with no exception', async () => {
  const created = await live.post('/v0/customers', individual({ address: { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' }, phone: undefined }));
  await live.post(`/v0/customers/${created.body.id}/kyc`, documents());
  await waitForKycStatus(live, created.body.id, 'manual_review');
  expect(runCli(['kyc', 'decide', created.body.id, '--decision', 'approve', '--operator', 'reconciliation-test']).status).toBe(0);
  const erika = await waitForKycStatus(live, created.body.id, 'approved');
  const payee = async (iban: string, bic: string) => (await live.post('/v0/external-accounts', {
    customer_id: erika.id, type: 'international_bank_account', account_name: 'Erika Mustermann', iban, bic, bank_name: 'Test Bank', bank_country: iban.slice(0, 2),
  })).body;
  const open = await payee('FR1420041010050500013M02606', 'PSSTFRPPXXX');
  const closed = await payee(CLOSED_IBAN, 'MARKDEF1200');
  /** A live payout to `to` in EUR, funded in USDC on base from a wallet of the test's. */
  const usdcToSepa = async (amount: string, to: { id: string }) => {
    const payer = await fundedCustomerWallet('base', 'usdc', parseAmount(amount, 6)!);
    const tr = await live.post('/v0/transfers', {
      amount, on_behalf_of: erika.id, source: { payment_rail: 'base', currency: 'usdc', from_address: payer.address },
      destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: to.id },
    });
    expect(tr.status).toBe(201);
    await payer.send(tr.body.source_deposit_instructions.to_address, parseAmount(amount, 6)!);
    return tr.body;
  };
  const paid = await usdcToSepa('61.00', open);
  const returned = await usdcToSepa('62.00', open);
  const rejected = await usdcToSepa('33.00', closed);
  const deposited = await live.post('/v0/transfers', {
    amount: '64.00', on_behalf_of: erika.id, source: { payment_rail: 'sepa', currency: 'eur' }, destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: open.id },
  });
  bank.writeSepaCredits([{ amountMinor: 6_400n, reference: deposited.body.source_deposit_instructions.deposit_reference, senderName: 'Erika Mustermann' }]);
  for (const id of [paid.id, returned.id, deposited.body.id]) await waitForTransferState(live, id, 'payment_processed', 120_000);
  await waitForTransferState(live, rejected.id, 'refunded', 120_000);
  const payout = await testDb().selectFrom('bank_payments').select('entry_ref').where('reference', '=', returned.id).where('purpose', '=', 'payout').executeTakeFirstOrThrow();
  const credit = await bank.waitForSepaCredit((c) => c.endToEndId === payout.entry_ref);
  bank.writeSepaReturns([{ credit, code: 'AC04' }]);
  await waitForTransferState(live, returned.id, 'refunded', 120_000);

  const file = await statement(undefined, 'sepa');
  const run = reconcile(file);
  expect(run.stderr).toBe('');
  expect(run.stdout).toMatch(new RegExp(`^rrun_\\S+ {2}account ${TEST_SEPA_ACCOUNT.iban}: \\d+ matched, 0 exceptions, closing balance agrees with the books\\n$`));
  const matched = Number(/: (\d+) matched/.exec(run.stdout)![1]);
  expect(matched).toBeGreaterThanOrEqual(3); // the deposit, the return and the payout batches
  expect(await testDb().selectFrom('reconciliation_exceptions').select('id').where('account', '=', TEST_SEPA_ACCOUNT.iban).execute()).toEqual([]);
}, 420_000);

test("the chain side: each payout settled since the last run is checked on its node; one recorded with a transaction that pays less, one with a transaction the node never saw, one with a transaction that pays someone else open exactly those exceptions", async () => {
  const client = await temporalClient();
  const day = async (name: string) => client.workflow.execute('dailyReconciliationWorkflow', { taskQueue: stack().taskQueue, workflowId: `test-reconciliation-chain-${name}-${Date.now()}`, args: [] }) as Promise<{ reportId: string; breaks: string[] }>;
  await day('before'); // what settled before this test: checked already
  const other = '0x1111111111111111111111111111111111111111';
  const orders = [['5.00', RECEIVER], ['4.00', other], ['3.00', RECEIVER], ['6.00', RECEIVER]] as const;
  // The payers' tokens minted one at a time (one issuer's nonces); then live USDC payouts on base, paid from the treasury once their deposits arrive: all at once.
  const payers: Awaited<ReturnType<typeof fundedCustomerWallet>>[] = [];
  for (const [amount] of orders) payers.push(await fundedCustomerWallet('base', 'usdc', parseAmount(amount, 6)!));
  const payouts = await Promise.all(orders.map(async ([amount, to], i) => {
    const payer = payers[i]!;
    const created = await live.post('/v0/transfers', {
      amount, on_behalf_of: customer.id, source: { payment_rail: 'base', currency: 'usdc', from_address: payer.address }, destination: { payment_rail: 'base', currency: 'usdc', to_address: to },
    });
    expect(created.status).toBe(201);
    await payer.send(created.body.source_deposit_instructions.to_address, parseAmount(amount, 6)!);
    await waitForTransferState(live, created.body.id, 'payment_processed', 180_000);
    return testDb().selectFrom('payments').select(['id', 'tx_hash', 'amount_minor']).where('transfer_id', '=', created.body.id).where('kind', '=', 'payout').executeTakeFirstOrThrow();
  }));
  const [five, four, three, six] = payouts as [typeof payouts[0], typeof payouts[0], typeof payouts[0], typeof payouts[0]];
  // The books go wrong (as issue 63's did). The database refuses one transaction for two payouts
  // (payments_one_per_signature), so: 5.00 and 6.00 swap transactions (the 6.00 is then recorded with
  // one that pays less), 4.00 names one the node never saw, and 3.00 the 4.00's, which paid someone else.
  const record = (id: string, txHash: string) => testDb().updateTable('payments').set({ tx_hash: txHash }).where('id', '=', id).execute();
  await record(five.id, `0x${'cd'.repeat(32)}`);
  await record(six.id, five.tx_hash!);
  await record(five.id, six.tx_hash!);
  await record(four.id, `0x${'ab'.repeat(32)}`);
  await record(three.id, four.tx_hash!);

  const checked = await day('checked');
  expect(checked.breaks).toContain('chain_exceptions:base');
  const operators = await createTenant({ operators: true });
  const ops = apiClient(operators.liveSecret);
  const report = (await ops.get(`/v0/reconciliation/reports/${checked.reportId}`)).body;
  expect(report.chains.find((c: any) => c.chain === 'base')).toEqual({ chain: 'base', checked: 4, exceptions_opened: 3 });
  const listed = (await ops.get('/v0/reconciliation/exceptions?account=base')).body.data;
  const byPayout = Object.fromEntries(listed.map((e: any) => [e.books_line.references[0], e]));
  // Amounts are what each payout paid out: its final amount, after fees.
  const usdc = (p: { amount_minor: string }, less = 0n) => formatAmount(BigInt(p.amount_minor) - less, 6);
  expect(byPayout[six.id]).toMatchObject({
    type: 'payee_not_paid', currency: 'usdc', amount: usdc(six, BigInt(five.amount_minor)),
    statement_line: { amount: usdc(five), references: [five.tx_hash] }, books_line: { amount: usdc(six), counterparty: RECEIVER },
  });
  expect(byPayout[four.id]).toMatchObject({ type: 'transaction_not_found', amount: usdc(four), statement_line: null });
  expect(byPayout[three.id]).toMatchObject({ type: 'payee_not_paid', amount: usdc(three), statement_line: { amount: '0.000000', references: [four.tx_hash] } });
  expect(byPayout[five.id]).toBeUndefined(); // the 6.00's transaction pays its payee at least 5.00
  expect(listed).toHaveLength(3);
  // Money that left on a chain is found or matched, never parked in suspense.
  const writeOff = await ops.post(`/v0/reconciliation/exceptions/${byPayout[four.id].id}/resolve`, { action: 'write_off', reason: 'lost?' });
  expect(writeOff.status).toBe(409);
  // The next day checks what settled since: these are not checked again.
  const next = await day('next');
  expect(next.breaks.filter((b) => b.startsWith('chain_exceptions:'))).toEqual([]);
}, 420_000);

test("the chain treasuries: each token's holdings against the books, and each native asset against what the treasury's own transactions spent, at a recorded block; the float an operator matched by hand agrees from then on; a payout out but in no block yet is explained, not flagged; tokens sent straight to the treasury on base and on solana, and a balance set on the base treasury, open exactly those differences; written off, the next day agrees", async () => {
  const client = await temporalClient();
  const day = async (name: string) => client.workflow.execute('dailyReconciliationWorkflow', { taskQueue: stack().taskQueue, workflowId: `test-reconciliation-holdings-${name}-${Date.now()}`, args: [] }) as Promise<{ reportId: string; breaks: string[] }>;
  const ops = apiClient((await createTenant({ operators: true })).liveSecret);
  const holdingsBreaks = (d: { breaks: string[] }) => d.breaks.filter((b) => b.startsWith('chain_balance:'));
  // The first day: each treasury's own float (and what earlier tests moved outside the books) is a
  // difference, which an operator matches by hand as the company's own funds.
  const first = await day('first');
  const firstReport = (await ops.get(`/v0/reconciliation/reports/${first.reportId}`)).body;
  expect(firstReport.holdings.map((h: any) => `${h.chain}:${h.currency}`)).toEqual(expect.arrayContaining(['base:usdc', 'base:usdt', 'arbitrum:usdc', 'solana:usdc', 'base:eth', 'polygon:matic']));
  for (const h of firstReport.holdings) expect(h.position).toMatch(/^\d+$/);
  for (const h of firstReport.holdings.filter((x: any) => !/^0\.0+$/.test(x.difference))) {
    const [newest] = (await ops.get(`/v0/reconciliation/exceptions?account=${h.chain}:${h.currency}&type=balance_difference&status=open`)).body.data;
    expect(newest).toMatchObject({ currency: h.currency, amount: h.difference.replace('-', '') });
    expect((await ops.post(`/v0/reconciliation/exceptions/${newest.id}/resolve`, { action: 'match', reason: "the treasury's own float" })).status).toBe(200);
  }
  expect(holdingsBreaks(await day('float-accepted'))).toEqual([]);

  // A payout out on arbitrum while its node makes no block (a live USDC transfer from base, whose
  // deposit and sweep land there): posted in the books, in no block at the node's height. Arbitrum
  // blocks come back at one a second (anvil takes whole seconds); no later file uses that chain.
  const arbitrum = createTestClient({ mode: 'anvil', transport: http(chainUrl('arbitrum')) });
  await arbitrum.setIntervalMining({ interval: 0 });
  let pending: { id: string } | undefined;
  try {
    const payer = await fundedCustomerWallet('base', 'usdc', 8_000_000n);
    const created = await live.post('/v0/transfers', {
      amount: '8.00', on_behalf_of: customer.id, source: { payment_rail: 'base', currency: 'usdc', from_address: payer.address },
      destination: { payment_rail: 'arbitrum', currency: 'usdc', to_address: RECEIVER },
    });
    expect(created.status).toBe(201);
    pending = created.body;
    await payer.send(created.body.source_deposit_instructions.to_address, 8_000_000n);
    await waitFor(() => testDb().selectFrom('payments').select('id').where('transfer_id', '=', created.body.id).where('kind', '=', 'payout').where('tx_hash', 'is not', null).executeTakeFirst(),
      { what: 'the payout signed and sent', timeoutMs: 120_000 });
    expect(holdingsBreaks(await day('payout-pending'))).toEqual([]);
  } finally {
    await arbitrum.setIntervalMining({ interval: 1 });
  }
  await waitForTransferState(live, pending!.id, 'payment_processed', 120_000);

  // Tokens sent straight to the treasuries from outside the books: 7.00 on base, 3.00 on solana; and
  // one ether more set on the base treasury by the node (anvil's setBalance).
  const stray = await fundedCustomerWallet('base', 'usdc', 7_000_000n);
  await stray.send(chainKeys.treasury.address, 7_000_000n);
  await strayToSolanaTreasury(3_000_000n);
  const base = createTestClient({ mode: 'anvil', transport: http(chainUrl('base')) });
  const publicBase = createPublicClient({ transport: http(chainUrl('base')) });
  await base.setBalance({ address: chainKeys.treasury.address, value: await publicBase.getBalance({ address: chainKeys.treasury.address }) + 10n ** 18n });
  // The run reads the node at the newest block deep enough to count (2 confirmations): a block or
  // two after the nudge, or it is tomorrow's difference.
  const nudgedAt = await publicBase.getBlockNumber({ cacheTime: 0 });
  await waitFor(async () => (await publicBase.getBlockNumber({ cacheTime: 0 })) >= nudgedAt + 3n, { what: 'the nudge deep enough' });
  const nudged = await day('nudged');
  expect(holdingsBreaks(nudged).sort()).toEqual(['chain_balance:base:eth', 'chain_balance:base:usdc', 'chain_balance:solana:usdc']);
  const differences = await Promise.all(['base:usdc', 'solana:usdc', 'base:eth'].map(async (account) =>
    (await ops.get(`/v0/reconciliation/exceptions?account=${account}&status=open`)).body.data));
  expect(differences.map((d: any[]) => d.map((e) => [e.type, e.amount, e.statement_line.direction]))).toEqual([
    [['balance_difference', '7.000000', 'credit']], [['balance_difference', '3.000000', 'credit']], [['balance_difference', '1.000000000000000000', 'credit']],
  ]);
  // Written off to suspense through the ledger: the books hold what the node holds, and the next day agrees.
  for (const [e] of differences) expect((await ops.post(`/v0/reconciliation/exceptions/${e.id}/resolve`, { action: 'write_off', reason: 'sent to the treasury by someone outside' })).status).toBe(200);
  expect(holdingsBreaks(await day('written-off'))).toEqual([]);
  await expectLedgerBalanced();
}, 420_000);

/** A stray solana transfer: a wallet of someone outside, its USDC minted by the issuer, sends some to the treasury. Money the books never saw. */
async function strayToSolanaTreasury(amountMinor: bigint) {
  const node = new SolanaNode(stack().processEnv.SOLANA_RPC_URL!, 'confirmed');
  const keys = new SolanaKeys(TEST_MNEMONIC);
  const mint = keys.sandboxMint('usdc')!.address;
  const outsider = await generateKeyPairSigner();
  await node.airdrop(outsider.address, 1_000_000_000n);
  const token = await node.associatedTokenAccount(outsider.address, mint);
  const minted = await signInstructions(node, outsider, [
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: outsider, owner: outsider.address, mint }),
    getMintToCheckedInstruction({ mint, token, mintAuthority: await keys.issuer.signer(), amount: amountMinor, decimals: 6 }),
  ]);
  await node.broadcast(minted.wire);
  await waitFor(async () => (await node.signatureStatus(minted.signature))?.confirmationStatus === 'finalized' || undefined, { what: 'the mint final' });
  const sent = await signTokenTransfer(node, { feePayer: outsider, authority: outsider, mint, decimals: 6, to: (await keys.treasury.signer()).address, amountMinor, memo: 'stray' });
  await node.broadcast(sent.wire);
  await waitFor(async () => (await node.signatureStatus(sent.signature))?.confirmationStatus === 'finalized' || undefined, { what: 'the stray transfer final' });
}

test('a worker killed during the daily run, inside its transaction: the run is tried again and records each match and exception once, and its report once', async () => {
  const client = await temporalClient();
  const ach = TEST_ODFI.collectionAccount;
  const strays = [1, 2, 3].map((i): BookedLine => ({
    direction: 'credit', amountMinor: BigInt(100 + i), bankReference: `SB-STRAY-${i}`, customerReference: `STRAY-${i}`, bai2TypeCode: '142', bankTransactionCode: 'PMNT/RCDT/ESCT', text: 'ACH CREDIT',
  }));
  await payoutsOf(['51.00']);
  const file = await statement((lines) => [...lines, ...strays]);
  // A worker of the test's own, on its own queue, to kill mid-way.
  const own = bankFileWorkerOfItsOwn('reconciliation');
  await own.ready();
  // The test holds the exceptions table (SHARE: others read it, none write): the run, inside its
  // transaction, records its run and its matches, then waits at its first exception, where it is killed.
  const holder = new pg.Client({ connectionString: stack().databaseUrl });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table reconciliation_exceptions in share mode');
    const workflowId = `test-reconciliation-crash-${Date.now()}`;
    const handle = await client.workflow.start('dailyReconciliationWorkflow', { taskQueue: own.taskQueue, workflowId, args: [] });
    await waitFor(async () => (await holder.query(`select 1 from pg_locks l join pg_class c on c.oid = l.relation
        where c.relname = 'reconciliation_exceptions' and not l.granted and l.pid <> pg_backend_pid()`)).rowCount! > 0,
    { what: 'the run waiting to record its exceptions', timeoutMs: 120_000 });
    await own.kill();
    await holder.query('rollback');
    const runs = () => testDb().selectFrom('reconciliation_runs').select(['id', 'matched', 'exceptions_opened']).where('statement_file_id', '=', file).execute();
    await waitFor(async () => (await holder.query(`select 1 from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'reconciliation_exceptions' and not l.granted`)).rowCount === 0,
      { what: 'the killed worker\'s transaction gone' });
    expect(await runs()).toEqual([]); // its run and matches rolled back with the worker's connection

    own.restart();
    const result = await handle.result() as { reportId: string; breaks: string[] };
    expect(result.breaks).toContain(`exceptions:${ach}`);
    const [run] = await runs();
    expect(run).toMatchObject({ exceptions_opened: 3 });
    const recorded = await testDb().selectFrom('reconciliation_matches').select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.count<string>('statement_line_id').distinct().as('lines')])
      .where('run_id', '=', run!.id).executeTakeFirstOrThrow();
    expect(run!.matched).toBeGreaterThanOrEqual(2); // the deposit and its payout's batch
    expect([Number(recorded.n), Number(recorded.lines)]).toEqual([run!.matched, run!.matched]);
    const exceptions = await testDb().selectFrom('reconciliation_exceptions').select('key').where('run_id', '=', run!.id).orderBy('key').execute();
    expect(exceptions).toHaveLength(3);
    expect(await testDb().selectFrom('reconciliation_days').select('id').where('run_key', '=', workflowId).execute()).toHaveLength(1);
    // The activity ran twice: the attempt lost with the worker, and the one that recorded the run.
    const history = await handle.fetchHistory();
    const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
    expect(attempts[0]).toBe(2);
  } finally {
    await holder.end();
    await own.stop();
  }
}, 360_000);
