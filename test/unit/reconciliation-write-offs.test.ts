import { bankExcessMinor, writeOffPostings } from '../../src/reconciliation/exceptions';

// What a reconciliation exception's write-off posts (src/reconciliation/exceptions.ts): how much
// more the bank holds than the books said, from the exception's two sides.

const line = (direction: 'credit' | 'debit', amountMinor: string) => ({ direction, amountMinor, date: '2026-11-27', references: [], counterparty: '' });

test.each([
  ['a payout the bank never paid (books: debit; statement: none)', null, line('debit', '3100'), 3_100n],
  ['a deposit the bank never booked (books: credit; statement: none)', null, line('credit', '2500'), -2_500n],
  ['a credit nobody expected', line('credit', '9999'), null, 9_999n],
  ['a debit nobody expected (a bank fee)', line('debit', '450'), null, -450n],
  ['a deposit 15.00 short', line('credit', '1700'), line('credit', '3200'), -1_500n],
  ['a payout batch booked 2.00 short', line('debit', '4800'), line('debit', '5000'), 200n],
])('%s', (_what, statement, expected, excess) => {
  expect(bankExcessMinor({ statement_line: statement, expected_line: expected })).toBe(excess);
});

test("a write-off moves the difference between the rail's clearing account and the suspense account, in the rail's currency, summing to zero", () => {
  const postings = writeOffPostings('sepa', 9_999n);
  expect(postings).toEqual([
    { account: { ownerType: 'platform', ownerId: 'sepa', purpose: 'rail_clearing', currency: 'eur' }, amountMinor: -9_999n },
    { account: { ownerType: 'platform', ownerId: 'sepa', purpose: 'reconciliation_suspense', currency: 'eur' }, amountMinor: 9_999n },
  ]);
  expect(postings.reduce((sum, p) => sum + p.amountMinor, 0n)).toBe(0n);
});
