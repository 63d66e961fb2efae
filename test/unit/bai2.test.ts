import fs from 'node:fs';
import path from 'node:path';
import { expectFixturesAsListed } from '../harness/fixture-checksums';
import { readBai2, type Bai2File } from '../../src/providers/bank-files/bai2';

// The BAI2 reader against published files (test/fixtures/bai2/README.md): the specification's
// examples and banks' output, with their quirks.

const DIR = path.join(__dirname, '../fixtures/bai2');
const sample = (name: string) => fs.readFileSync(path.join(DIR, name), 'utf8');
const accounts = (f: Bai2File) => f.groups.flatMap((g) => g.accounts);
const transactions = (f: Bai2File) => accounts(f).flatMap((a) => a.transactions);

test('the fixtures are the published files (checksums in their README)', () => {
  expectFixturesAsListed(DIR, '.txt');
});

test("the specification's example: balances and summaries per account, every transaction with its direction, amount, funds type and text; the totals agree", () => {
  const file = readBai2(sample('sample1.txt'));
  expect(file).toMatchObject({ sender: '0004', receiver: '12345', creationDate: '060321', creationTime: '0829', fileId: '001', problems: [] });
  expect(accounts(file).map((a) => [a.number, a.currency, a.transactions.length])).toEqual([['10200123456', 'CAD', 11], ['10200123456', 'CAD', 6]]);
  expect(accounts(file)[0]!.summaries).toEqual([
    { typeCode: '040', amountMinor: 0n, itemCount: null, fundsType: '' },
    { typeCode: '045', amountMinor: 0n, itemCount: null, fundsType: '' },
    { typeCode: '100', amountMinor: 208_500n, itemCount: 3, fundsType: 'V' },
    { typeCode: '400', amountMinor: 208_500n, itemCount: 8, fundsType: 'V' },
  ]);
  expect(transactions(file)[0]).toEqual({ typeCode: '409', direction: 'debit', amountMinor: 2_500n, fundsType: 'V', bankReference: '', customerReference: '', text: 'RETURNED CHEQUE' });
  expect(transactions(file)[3]).toMatchObject({ typeCode: '108', direction: 'credit', amountMinor: 203_500n, text: 'TFR 1020 0345678' });
});

test('funds types S (three amounts) and D (a distribution), summaries and text continued on 88 records, signed balances', () => {
  const file = readBai2(sample('sample2.txt'));
  expect(file.problems).toEqual([]);
  expect(file.groups.map((g) => [g.originator, g.status, g.accounts.length])).toEqual([['122099999', '1', 2], ['122099999', '1', 1], ['122099999', '1', 1], ['122099999', '3', 1]]);
  const [, second] = accounts(file);
  // 03,9876543210,,010,-500000,,,100,1000000,,,400,2000000,,,190 / 88,500000,,,110,… / 88,-1500000,,
  expect(second!.summaries.map((s) => [s.typeCode, s.amountMinor])).toEqual([['010', -500_000n], ['100', 1_000_000n], ['400', 2_000_000n], ['190', 500_000n], ['110', 1_000_000n], ['072', 500_000n], ['074', 500_000n], ['040', -1_500_000n]]);
  expect(transactions(file)[0]).toEqual({ typeCode: '115', direction: 'credit', amountMinor: 450_000n, fundsType: 'S', bankReference: '', customerReference: '', text: '' });
  expect(transactions(file)[1]).toMatchObject({ amountMinor: 500_000n, fundsType: 'S', text: 'LOCK BOX NO.68751' });
  expect(transactions(file)[2]).toMatchObject({ typeCode: '218', fundsType: 'V', bankReference: 'SP4738', customerReference: 'YRC065321', text: 'PROCEEDS OF LETTER OF CREDIT FROM THE ARAMCO OIL CO' });
  expect(accounts(file)[3]!.summaries[2]).toEqual({ typeCode: '110', amountMinor: 70_000_000n, itemCount: 15, fundsType: 'D' });
});

test("a bank's file with several records on a line and a record broken over two lines reads whole, its totals agreeing", () => {
  const file = readBai2(sample('sample3.txt'));
  expect([accounts(file).length, transactions(file).length, file.problems]).toEqual([15, 26, []]);
  expect(transactions(file)[1]).toMatchObject({ typeCode: '142', amountMinor: 500n, text: 'TRANSFER   MSPBNA BANK        PPD' });
});

test('records ended by the line: a transaction\'s text runs on over its 88 lines; trailers that disagree are kept as problems, not read past', () => {
  const file = readBai2(sample('sample4-continuations-newline-delimited.txt'));
  const reject = transactions(file).find((t) => t.bankReference === 'SB2322600000404')!;
  expect(reject).toMatchObject({ typeCode: '261', direction: 'credit', amountMinor: 143_500n, customerReference: 'GSQ4FBGFDGWGKY' });
  expect(reject.text.split('\n')).toEqual([
    'ACH Credit Reject,From: TEST INC, Remittance Info: "ACH- Test - Addenda Record", Entry Description: TRADE; -, SEC: CTX, Client Ref ID: GSQ4FBGFDGWGKY, GS ID: SB2322600000404',
    'CREF:', 'REMI: ACH- Test - Addenda Record', 'EREF: GSQ4FBGFDGWGKY', 'CRNM: Test', 'DBNM: SAMPLE INC', 'DACT: 101152046', 'DABA: 026015079',
  ]);
  expect(file.problems).toContain("account 107049932's trailer states a total of -1260161341762; its records add up to 7999960");
  expect(readBai2(sample('sample5-issue113.txt')).problems.length).toBeGreaterThan(0);
});

test('a changed amount shows in the trailer check; what is not BAI2, or is cut short, is refused by name', () => {
  const altered = sample('sample1.txt').replace('16,409,000000000002500,V,060316,,,,RETURNED CHEQUE', '16,409,000000000002600,V,060316,,,,RETURNED CHEQUE');
  expect(readBai2(altered).problems).toEqual([
    "account 10200123456's trailer states a total of 834000; its records add up to 834100",
    "group 0004's trailer states a total of 1280000; its records add up to 1280100",
    'the file trailer states a total of 1280000; its records add up to 1280100',
  ]);
  expect(() => readBai2(sample('sample-parseError.txt'))).toThrow('is not a record');
  expect(() => readBai2(sample('sample1.txt').replace(/99,.*\/\s*$/, ''))).toThrow('the file has no trailer (99): cut short?');
  expect(() => readBai2(sample('sample1.txt').replace('16,409,000000000090000', '16,409,00000000009OOOO'))).toThrow('is not an amount');
});
