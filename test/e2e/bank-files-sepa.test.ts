import { parseAmount } from '../../src/domain/money';
import { readPain001 } from '../../src/providers/bank-files/sepa-messages';
import { apiClient, createTenant, documents, individual, runCli, stack, testDb, waitFor, waitForKycStatus, type ApiClient } from '../harness';
import { iso20022SchemaErrors } from '../harness/iso20022-schemas';
import { TEST_ODFI, TEST_SEPA_ACCOUNT } from '../harness/stack';
import { BLOCK_REJECTED_IBAN, CLOSED_IBAN, MESSAGE_REJECTED_IBAN, TestBank } from '../harness/test-bank';
import { expectLedgerBalanced, fundedCustomerWallet, tokenBalance, waitForTransferState } from '../harness/transfers';
import fs from 'node:fs';
import path from 'node:path';

// The live SEPA rail through the bank's files (docs/BANK_FILES.md): pain.001.001.09 credit transfers
// over the real SFTP server, the bank's pain.002 status reports and camt.054 notifications back.

let live: ApiClient;
let bank: TestBank;
let customer: { id: string };
let account: { id: string };
const DE_ADDRESS = { line1: 'Unter den Linden 1', city: 'Berlin', postal_code: '10117', country: 'DE' };

async function sepaAccount(iban: string, bic: string) {
  const res = await live.post('/v0/external-accounts', {
    customer_id: customer.id, type: 'international_bank_account', account_name: 'Erika Mustermann', iban, bic, bank_name: 'Test Bank', bank_country: iban.slice(0, 2),
  });
  expect(res.status).toBe(201);
  return res.body;
}

/** A live transfer from USDC on base to a SEPA account, funded from a wallet of the test's (anvil's accounts 8 and 9 have gas). */
async function usdcToSepa(amount: string, externalAccountId: string) {
  const payer = await fundedCustomerWallet('base', 'usdc', parseAmount(amount, 6)!);
  const created = await live.post('/v0/transfers', {
    amount, on_behalf_of: customer.id,
    source: { payment_rail: 'base', currency: 'usdc', from_address: payer.address },
    destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: externalAccountId },
  });
  expect(created.status).toBe(201);
  await payer.send(created.body.source_deposit_instructions.to_address, parseAmount(amount, 6)!);
  return { ...created.body, payer: payer.address };
}

let developerId: string;

beforeAll(async () => {
  const t = await createTenant();
  developerId = t.developerId;
  live = apiClient(t.liveSecret);
  bank = new TestBank(stack().bankRoot!, TEST_ODFI, { sepaIban: TEST_SEPA_ACCOUNT.iban, takes: ['sepa'] }).start();
  const created = await live.post('/v0/customers', individual({ address: DE_ADDRESS, phone: undefined }));
  await live.post(`/v0/customers/${created.body.id}/kyc`, documents());
  await waitForKycStatus(live, created.body.id, 'manual_review');
  expect(runCli(['kyc', 'decide', created.body.id, '--decision', 'approve', '--operator', 'bank-files-sepa-test']).status).toBe(0);
  customer = await waitForKycStatus(live, created.body.id, 'approved');
  account = await sepaAccount('FR1420041010050500013M02606', 'PSSTFRPPXXX');
}, 120_000);

afterAll(async () => {
  bank.stop();
  await expectLedgerBalanced();
});

test('a live SEPA payout goes out as a pain.001.001.09 valid against the ISO 20022 schema, which the bank reads back field by field and settles; a camt.054 return (AC04) follows the returned path', async () => {
  const tr = await usdcToSepa('54.00', account.id);
  const queued = await waitFor(() => testDb().selectFrom('bank_payments').selectAll().where('reference', '=', tr.id).where('purpose', '=', 'payout').executeTakeFirst(),
    { what: 'the payout queued', timeoutMs: 60_000 });
  const credit = await bank.waitForSepaCredit((c) => c.endToEndId === queued.entry_ref);
  expect(credit).toMatchObject({
    amountMinor: BigInt(queued.amount_minor), currency: 'EUR', creditorName: 'Erika Mustermann', creditorIban: 'FR1420041010050500013M02606',
    creditorBic: 'PSSTFRPPXXX', debtorIban: TEST_SEPA_ACCOUNT.iban, remittance: `PAYOUT ${tr.id.replace("_", "-")}`,
  });
  // The message as a whole: its namespace, the official schema, its count and control sum.
  const text = fs.readFileSync(path.join(stack().bankRoot!, 'inbox', credit.file), 'utf8');
  expect(text).toContain('xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"');
  expect(await iso20022SchemaErrors(text)).toEqual([]);
  const message = readPain001(text);
  expect(message.count).toBe(message.credits.length);
  expect(message.controlSumMinor).toBe(message.credits.reduce((s, c) => s + c.amountMinor, 0n));
  const done = await waitForTransferState(live, tr.id, 'payment_processed', 60_000);
  expect(parseAmount(done.receipt.final_amount, 2)).toBe(BigInt(queued.amount_minor));

  // The receiving bank sends it back: the account was closed after all.
  const before = await tokenBalance('base', 'usdc', tr.payer);
  bank.writeSepaReturns([{ credit, code: 'AC04' }]);
  await waitForTransferState(live, tr.id, 'refunded', 90_000);
  const payout = await testDb().selectFrom('bank_payments').select(['status', 'code']).where('id', '=', queued.id).executeTakeFirstOrThrow();
  expect(payout).toEqual({ status: 'returned', code: 'AC04' });
  expect(await tokenBalance('base', 'usdc', tr.payer) - before).toBe(54_000_000n);
}, 150_000);

test('a pain.002 rejection (AC04, account closed) makes the payout undeliverable, and the USDC goes back on base', async () => {
  const closed = await sepaAccount(CLOSED_IBAN, 'MARKDEF1200');
  const tr = await usdcToSepa('33.00', closed.id);
  const before = await tokenBalance('base', 'usdc', tr.payer);
  const refunded = await waitForTransferState(live, tr.id, 'refunded', 90_000);
  expect(refunded.state).toBe('refunded');
  const payout = await testDb().selectFrom('bank_payments').select(['status', 'code']).where('reference', '=', tr.id).where('purpose', '=', 'payout').executeTakeFirstOrThrow();
  expect(payout).toEqual({ status: 'rejected', code: 'AC04' });
  const events = (await live.get(`/v0/events?type=transfer.undeliverable`)).body.data;
  expect(events.some((e: any) => e.data.id === tr.id)).toBe(true);
  expect(await tokenBalance('base', 'usdc', tr.payer) - before).toBe(33_000_000n);
}, 150_000);

test('a camt.054 credit naming a transfer\'s deposit reference funds it, and its payout goes out', async () => {
  const created = await live.post('/v0/transfers', {
    amount: '75.00', on_behalf_of: customer.id,
    source: { payment_rail: 'sepa', currency: 'eur' },
    destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: account.id },
  });
  expect(created.status).toBe(201);
  expect(created.body.source_deposit_instructions).toMatchObject({ iban: TEST_SEPA_ACCOUNT.iban, bic: TEST_SEPA_ACCOUNT.bic });
  bank.writeSepaCredits([{ amountMinor: 7_500n, reference: created.body.source_deposit_instructions.deposit_reference, senderName: 'Erika Mustermann' }]);
  await waitForTransferState(live, created.body.id, 'payment_processed', 60_000);
  const deposit = await testDb().selectFrom('rail_events').select(['outcome', 'transfer_id']).where('transfer_id', '=', created.body.id).executeTakeFirstOrThrow();
  expect(deposit.outcome).toBe('deposit_received');
}, 120_000);

test('a pain.002 that rejects the whole message (DU01), or its payment block (AM04), takes every payment of it down the rejected path', async () => {
  // A credit to these makes the test bank reject the whole message (DU01), or its payment block (AM04).
  for (const [iban, amount, code] of [[MESSAGE_REJECTED_IBAN, '16.00', 'DU01'], [BLOCK_REJECTED_IBAN, '17.00', 'AM04']] as const) {
    const payee = await sepaAccount(iban, 'COBADEFFXXX');
    const tr = await usdcToSepa(amount, payee.id);
    const before = await tokenBalance('base', 'usdc', tr.payer);
    await waitForTransferState(live, tr.id, 'refunded', 90_000);
    const payout = await testDb().selectFrom('bank_payments').select(['status', 'code', 'reason']).where('reference', '=', tr.id).where('purpose', '=', 'payout').executeTakeFirstOrThrow();
    // Rejected before its settlement time (the reason names the message or block); a report that came after it is a return.
    expect(payout).toMatchObject({ status: expect.stringMatching(/^(rejected|returned)$/), code });
    if (payout.status === 'rejected') {
      expect(payout.reason).toMatch(code === 'DU01' ? /^the bank rejected message SCT\d{11}$/ : /^the bank rejected payment block SCT\d{11}\.0 of message SCT\d{11}$/);
    }
    expect(await tokenBalance('base', 'usdc', tr.payer) - before).toBe(parseAmount(amount, 6)!);
  }
}, 240_000);

test('a camt.054 entry booking 3 credits as one batch funds 3 transfers, each by its own reference and amount', async () => {
  const created = await Promise.all(['21.00', '22.00', '23.00'].map((amount) => live.post('/v0/transfers', {
    amount, on_behalf_of: customer.id, source: { payment_rail: 'sepa', currency: 'eur' },
    destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: account.id },
  })));
  expect(created.map((r) => r.status)).toEqual([201, 201, 201]);
  bank.writeSepaBatchCredits(created.map((r) => ({
    amountMinor: parseAmount(r.body.source_deposit_instructions.amount, 2)!, reference: r.body.source_deposit_instructions.deposit_reference, senderName: 'Erika Mustermann',
  })));
  for (const r of created) await waitForTransferState(live, r.body.id, 'payment_processed', 90_000);
  // Each its own rail event: one entry's three transactions were not one credit and two duplicates.
  const deposits = await testDb().selectFrom('rail_events').select(['id', 'outcome']).where('transfer_id', 'in', created.map((r) => r.body.id)).execute();
  expect(deposits.map((d) => d.outcome)).toEqual(['deposit_received', 'deposit_received', 'deposit_received']);
  expect(new Set(deposits.map((d) => d.id)).size).toBe(3);
}, 180_000);

test('live payments reached the bank\'s files, never the simulator', async () => {
  const count = async (table: 'rail_payments' | 'bank_payments') => Number((await testDb().selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n'))
    .where('developer_id', '=', developerId).where('environment', '=', 'production').executeTakeFirstOrThrow()).n);
  expect(await count('rail_payments')).toBe(0);
  expect(await count('bank_payments')).toBeGreaterThan(0);
});
