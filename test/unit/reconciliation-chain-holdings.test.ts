import { breaksOf, reportJson, ReconciliationReportSchema } from '../../src/reconciliation/daily';
import { holdingsCheck, type BooksHoldings } from '../../src/reconciliation/chain-holdings';
import { nativeCheck } from '../../src/reconciliation/chain-native';

// A chain treasury's holdings against the books (src/reconciliation/chain-holdings.ts): money in
// flight is explained by whether its transaction had landed at the block the node was read at.

const books = (over: Partial<BooksHoldings> = {}): BooksHoldings =>
  ({ treasuryAccountsMinor: -1_000_000n, notSwept: [], postedOut: [], unpostedOut: [], exceptionsExcessMinor: 0n, ...over });

test('a treasury holding what the books say agrees; any other amount is its difference', () => {
  expect(holdingsCheck(1_000_000n, books(), new Set())).toEqual({ booksMinor: 1_000_000n, explainedMinor: 0n, differenceMinor: 0n });
  expect(holdingsCheck(1_007_000n, books(), new Set()).differenceMinor).toBe(7_000n);
  expect(holdingsCheck(993_000n, books(), new Set()).differenceMinor).toBe(-7_000n);
});

test('a payout posted but not landed at the node\'s block is still in the treasury; landed, it is gone', () => {
  const posted = books({ treasuryAccountsMinor: -900_000n, postedOut: [{ amountMinor: 100_000n, txHash: '0xpay' }, { amountMinor: 50_000n, txHash: null }] });
  // Neither landed: the node still holds both.
  expect(holdingsCheck(1_000_000n, { ...posted, treasuryAccountsMinor: -850_000n }, new Set()).differenceMinor).toBe(0n);
  // The first landed: the node holds only the unsigned one.
  expect(holdingsCheck(900_000n, { ...posted, treasuryAccountsMinor: -850_000n }, new Set(['0xpay'])).differenceMinor).toBe(0n);
});

test('a deposit the books took is in the treasury once its sweep landed, at its deposit address before', () => {
  const took = books({ treasuryAccountsMinor: -1_200_000n, notSwept: [{ amountMinor: 200_000n, txHash: '0xsweep' }] });
  expect(holdingsCheck(1_000_000n, took, new Set()).differenceMinor).toBe(0n);
  expect(holdingsCheck(1_200_000n, took, new Set(['0xsweep'])).differenceMinor).toBe(0n);
});

test('a stray\'s return, posted only once final, has left the treasury as soon as it landed', () => {
  const returning = books({ unpostedOut: [{ amountMinor: 30_000n, txHash: '0xback' }] });
  expect(holdingsCheck(1_000_000n, returning, new Set()).differenceMinor).toBe(0n);
  expect(holdingsCheck(970_000n, returning, new Set(['0xback'])).differenceMinor).toBe(0n);
});

test('a difference an operator accepted (the treasury\'s own float, matched by hand) is explained from then on', () => {
  expect(holdingsCheck(6_000_000n, books({ exceptionsExcessMinor: 5_000_000n }), new Set()).differenceMinor).toBe(0n);
});

test('holdings that differ are a break named with chain and currency; the report shows each treasury read, at its block', () => {
  const holdings = [{ chain: 'base', currency: 'usdc', position: '812', differenceMinor: '7000000' }, { chain: 'solana', currency: 'usdc', position: '4410', differenceMinor: '0' }];
  expect(breaksOf([], [], holdings)).toEqual(['chain_balance:base:usdc']);
  const shown = reportJson({ id: 'rday_1', environment: 'production', since: '2026-11-28T13:00:00.000Z', ranAt: '2026-11-29T13:00:00.000Z', accounts: [], chains: [], holdings, breaks: ['chain_balance:base:usdc'] });
  expect(ReconciliationReportSchema.parse(shown)).toEqual(shown);
  expect(shown.holdings).toEqual([
    { chain: 'base', currency: 'usdc', position: '812', difference: '7.000000' },
    { chain: 'solana', currency: 'usdc', position: '4410', difference: '0.000000' },
  ]);
});

test('a treasury\'s native asset: its balance plus all its own transactions ever cost it is the float an operator accepted; anything else that moved it is the difference', () => {
  const float = 10_000n * 10n ** 18n;
  // 0.3 spent on gas by the platform's own transactions: agrees.
  expect(nativeCheck(float - 3n * 10n ** 17n, { spentMinor: 3n * 10n ** 17n, ledgerMinor: 0n, acceptedMinor: float }).differenceMinor).toBe(0n);
  // A balance set on the node, 1 more than that: a difference of 1.
  expect(nativeCheck(float + 10n ** 18n - 3n * 10n ** 17n, { spentMinor: 3n * 10n ** 17n, ledgerMinor: 0n, acceptedMinor: float }).differenceMinor).toBe(10n ** 18n);
  // Written off, the books hold it.
  expect(nativeCheck(float + 10n ** 18n, { spentMinor: 0n, ledgerMinor: 10n ** 18n, acceptedMinor: float })).toEqual({ booksMinor: 10n ** 18n, explainedMinor: float, differenceMinor: 0n });
});
