import { balanceCheck, type BooksSide } from '../../src/reconciliation/closing-balance';

// The closing balance against the books (src/reconciliation/closing-balance.ts): the bank's cash is
// the clearing accounts' negation as of the cut-off; what the books know to differ is explained.

const books = (over: Partial<BooksSide>): BooksSide => ({
  clearingMinor: 0n, afterCutoffMinor: 0n, exceptionsExcessMinor: 0n, shortfallMinor: 0n, notYetAtBankMinor: 0n, microDepositsMinor: 0n, ...over,
});

test('deposits of 100.00 and a payout of 30.00 leave 70.00 at the bank: the clearing account is at -70.00, and they agree', () => {
  expect(balanceCheck(7_000n, books({ clearingMinor: -7_000n }))).toEqual({ booksMinor: 7_000n, explainedMinor: 0n, differenceMinor: 0n });
});

test('what the books recorded after the cut-off is not on this statement: a deposit of 5.00 read since', () => {
  expect(balanceCheck(7_000n, books({ clearingMinor: -7_500n, afterCutoffMinor: 500n })).differenceMinor).toBe(0n);
});

test('a payout queued but in no file yet is posted, and the bank still holds it', () => {
  expect(balanceCheck(7_000n, books({ clearingMinor: -4_000n, notYetAtBankMinor: 3_000n }))).toEqual({ booksMinor: 4_000n, explainedMinor: 3_000n, differenceMinor: 0n });
});

test('micro-deposits paid and not yet recovered: the bank holds less, the ledger knows nothing of them', () => {
  expect(balanceCheck(6_955n, books({ clearingMinor: -7_000n, microDepositsMinor: -45n })).differenceMinor).toBe(0n);
});

test('exceptions explain what they name (a payout left out: the bank holds 31.00 more); a credit matched 2.00 short: 2.00 less', () => {
  expect(balanceCheck(10_100n - 200n, books({ clearingMinor: -7_000n, exceptionsExcessMinor: 3_100n, shortfallMinor: 200n })).differenceMinor).toBe(0n);
});

test('money the books hold that the bank never saw is the difference: the bank 10.00 short', () => {
  expect(balanceCheck(7_000n, books({ clearingMinor: -8_000n }))).toEqual({ booksMinor: 8_000n, explainedMinor: 0n, differenceMinor: -1_000n });
});
