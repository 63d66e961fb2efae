import { parseAmount } from '../../src/domain/money';
import { apiClient, createTenant, runCli, stack, testDb, waitFor, type ApiClient } from '../harness';
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
