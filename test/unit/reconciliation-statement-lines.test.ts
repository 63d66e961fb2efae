import fs from 'node:fs';
import path from 'node:path';
import { readBai2 } from '../../src/providers/bank-files/bai2';
import { readCamt053 } from '../../src/providers/bank-files/camt053';
import { matchStatement, type ExpectedLine } from '../../src/reconciliation/matching';
import { bai2Lines, camt053Lines } from '../../src/reconciliation/statement-lines';

// Published statements (test/fixtures) as the matcher's lines.

const fixture = (dir: string, name: string) => fs.readFileSync(path.join(__dirname, '../fixtures', dir, name), 'utf8');
const net = (lines: { direction: string; amountMinor: bigint }[]) => lines.reduce((s, l) => s + (l.direction === 'credit' ? l.amountMinor : -l.amountMinor), 0n);

test("a BAI2 account's transactions are its lines, on the group's as-of date, with the bank's references", () => {
  const lines = bai2Lines(readBai2(fixture('bai2', 'sample2.txt')), 'sample2.txt', '4589761203');
  expect(lines).toEqual([
    { id: 'sample2.txt:2:1:1', direction: 'credit', amountMinor: 20_000_000n, date: '2004-06-20', references: ['SP4738', 'YRC065321', 'PROCEEDS'], counterparty: '' },
    { id: 'sample2.txt:2:1:2', direction: 'credit', amountMinor: 10_000_000n, date: '2004-06-20', references: [], counterparty: '' },
  ]);
  expect(bai2Lines(readBai2(fixture('bai2', 'sample1.txt')), 'sample1.txt', '10200123456')).toHaveLength(17);
});

test('camt.053: a payment block of ours booked as one line stays one line, named by our message and block; split credits are a line each; the lines add up to the statement', () => {
  const [statement] = readCamt053(fixture('camt053', 'finland-camt.053.001.02.xml'));
  const lines = camt053Lines(statement!);
  // Ten entries; the last, a debit of two transactions with amounts of their own and no batch of ours, is two lines.
  expect(lines.map((l) => l.id.split(':').slice(1).join(':'))).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10:1', '10:2']);
  expect(lines.slice(-2).map((l) => [l.amountMinor, l.references[0]])).toEqual([[10_000n, '091029ARCH09001'], [10_000n, expect.any(String)]]);
  expect(lines.find((l) => l.references.includes('MSGSCT0100'))).toMatchObject({ direction: 'debit', amountMinor: 423_005n, references: expect.arrayContaining(['091029ACCTSTMTARCH03', 'CustRefForPmtBatch9', '091029ARCH03002']) });
  const opening = statement!.balances.find((b) => b.type === 'OPBD')!.amountMinor;
  expect(opening + net(lines)).toBe(statement!.balances.find((b) => b.type === 'CLBD')!.amountMinor);

  // Our books for that day: the two payment blocks we filed, found by their message ids.
  const books: ExpectedLine[] = [
    { id: 'file:MSGSCT0099', direction: 'debit', amountMinor: 400_000n, date: '2009-10-29', references: ['MSGSCT0099'], counterparty: '' },
    { id: 'file:MSGSCT0100', direction: 'debit', amountMinor: 423_005n, date: '2009-10-29', references: ['MSGSCT0100'], counterparty: '' },
  ];
  const { matches, exceptions } = matchStatement(lines, books, { shortfallMinor: 0n, days: 1 });
  expect(matches.map((m) => [m.expectedId, m.by])).toEqual([['file:MSGSCT0099', 'reference'], ['file:MSGSCT0100', 'reference']]);
  expect(exceptions.every((e) => e.type === 'unexpected_on_statement')).toBe(true);
});
