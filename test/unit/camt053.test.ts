import fs from 'node:fs';
import path from 'node:path';
import { expectFixturesAsListed } from '../harness/fixture-checksums';
import { readCamt053 } from '../../src/providers/bank-files/camt053';

// The camt.053 reader against published statements (test/fixtures/camt053/README.md).

const DIR = path.join(__dirname, '../fixtures/camt053');
const sample = (name: string) => fs.readFileSync(path.join(DIR, name), 'utf8');

test('the fixtures are the published files (checksums in their README)', () => {
  expectFixturesAsListed(DIR, '.xml');
});

test("a Swiss bank's statement: balances signed, every entry with status, dates and bank transaction code; a next-day value is in the forward balance only", () => {
  const [statement, ...more] = readCamt053(sample('postfinance-camt.053.001.04.xml'));
  expect(more).toEqual([]);
  expect(statement).toMatchObject({ id: '20201124375204229003973', iban: 'CH2909000000250094239', currency: 'CHF', problems: [] });
  expect(statement!.balances.map((b) => [b.type, b.amountMinor, b.date])).toEqual([
    ['OPBD', 21_199_319n, '2020-11-24'], ['CLBD', 21_511_221n, '2020-11-24'], ['CLAV', 21_511_221n, '2020-11-24'], ['FWAV', 21_664_921n, '2020-11-25'],
  ]);
  expect(statement!.entries[0]).toMatchObject({
    reference: '0758103031480900', amountMinor: 450n, direction: 'credit', status: 'BOOK', reversal: false, bookingDate: '2020-11-24', valueDate: '2020-11-24',
    bankTransactionCode: 'PMNT/IDDT/PMDD', batch: null, transactions: [{ reference: '0758103031480900', amountMinor: 450n }],
  });
  expect(statement!.entries.map((e) => [e.direction, e.amountMinor, e.valueDate])).toContainEqual(['credit', 153_700n, '2020-11-25']);
});

test('batch bookings of our payment blocks: the message and block they book, their transactions split with their own amounts and parties; charges kept', () => {
  const [statement] = readCamt053(sample('finland-camt.053.001.02.xml'));
  expect(statement).toMatchObject({ iban: 'FI7433010001222090', currency: 'EUR', problems: [] });
  const byRef = new Map(statement!.entries.map((e) => [e.reference, e]));
  // A block booked as one line, without its transactions (salaries): the block is what matches.
  expect(byRef.get('091029ACCTSTMTARCH01')).toMatchObject({
    amountMinor: 100_012n, direction: 'debit', bankTransactionCode: 'PMNT/ICDT/SALA', batch: { messageId: 'MSGSALA0001', paymentInfoId: 'CustRefForSalaBatch', count: 4 }, transactions: [],
  });
  const block = byRef.get('091029ACCTSTMTARCH03')!;
  expect(block.batch).toEqual({ messageId: 'MSGSCT0100', paymentInfoId: 'CustRefForPmtBatch9', count: 3 });
  expect(block.transactions.map((t) => [t.reference, t.amountMinor, t.counterparty])).toEqual([
    ['091029ARCH03001', 200_002n, 'Creditor Company'], ['091029ARCH03002', 100_001n, 'Creditor Company'], ['091029ARCH03003', 123_002n, 'Creditor Company'],
  ]);
  expect(block.transactions.reduce((s, t) => s + t.amountMinor!, 0n)).toBe(block.amountMinor);
  expect(block.transactions[1]!.remittance).toBe('Invoices 123 and 321');
  // A USD wire credited in euros: the account's amount, not the instructed one, and the fee taken.
  expect(byRef.get('091029ACCTSTMTARCH06')!.transactions).toEqual([expect.objectContaining({ reference: 'ISSRBKREF12345678', amountMinor: 212_000n, chargesMinor: 2_000n })]);
});

test('a closing balance the entries do not reach is a problem of the statement; what is not a camt.053, or an amount that is not one, is refused', () => {
  const altered = sample('finland-camt.053.001.02.xml').replace('<Amt Ccy="EUR">23644.83</Amt>', '<Amt Ccy="EUR">23644.84</Amt>');
  expect(readCamt053(altered)[0]!.problems).toEqual(['opening 1000000 plus booked entries 1364483 is 2364483, not the closing balance 2364484']);
  expect(() => readCamt053('<Document><BkToCstmrDbtCdtNtfctn/></Document>')).toThrow('Not a camt.053 bank-to-customer statement');
  expect(() => readCamt053(sample('postfinance-camt.053.001.04.xml').replace('>4.50<', '>4,50<'))).toThrow("Ntry/Amt: '4,50' is not an amount");
});
