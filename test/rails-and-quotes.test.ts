import { RAILS, realSettlementTime, type FiatRailProfile } from '../src/domain/rails';
import { SandboxRateProvider, quoteReceipt, swiftChargesSplit } from '../src/domain/quote';
import { depositPostings, payoutPostings, payoutReversalPostings, refundPostings, type TransferMoney } from '../src/domain/transfers';

// Pure logic: settlement calendars, quotes and the shape of the ledger postings.

const at = (iso: string) => new Date(iso);
const fiat = (rail: keyof typeof RAILS) => RAILS[rail] as FiatRailProfile;

describe('settlement times follow cut-offs and business days', () => {
  test.each([
    ['ach before the cut-off on a Tuesday: Wednesday 17:00', 'ach', '2026-11-17T10:00:00Z', '2026-11-18T17:00:00.000Z'],
    ['ach after the 21:00 cut-off: Thursday', 'ach', '2026-11-17T21:30:00Z', '2026-11-19T17:00:00.000Z'],
    ['ach on a Friday: Monday', 'ach', '2026-11-20T10:00:00Z', '2026-11-23T17:00:00.000Z'],
    ['ach on a Saturday: Tuesday (Monday is day 0)', 'ach', '2026-11-21T10:00:00Z', '2026-11-24T17:00:00.000Z'],
    ['same-day ACH before its cut-off: 30 minutes later', 'ach_same_day', '2026-11-17T10:00:00Z', '2026-11-17T10:30:00.000Z'],
    ['same-day ACH after its cut-off: next business day', 'ach_same_day', '2026-11-17T20:30:00Z', '2026-11-18T17:00:00.000Z'],
    ['wire on a Sunday: Monday', 'wire', '2026-11-22T10:00:00Z', '2026-11-23T17:00:00.000Z'],
    ['swift: two business days', 'swift', '2026-11-19T09:00:00Z', '2026-11-23T17:00:00.000Z'],
    ['pix: a second later, even on a Sunday night', 'pix', '2026-11-22T23:59:59Z', '2026-11-23T00:00:00.000Z'],
  ] as const)('%s', (_name, rail, submitted, settles) => {
    expect(realSettlementTime(fiat(rail), at(submitted)).toISOString()).toBe(settles);
  });
});

describe('quotes', () => {
  const rates = new SandboxRateProvider();
  test('cross rates are rounded down to 8 decimals; stablecoins are pegged', async () => {
    expect(await rates.rate('usd', 'usdc')).toBe('1');
    expect(await rates.rate('eur', 'usdt')).toBe('1.08');
    expect(await rates.rate('usd', 'eur')).toBe('0.92592592');
    expect(await rates.rate('gbp', 'mxn')).toBe('23.09090909');
    expect(await new SandboxRateProvider({ eur: '1.1' }).rate('eur', 'usd')).toBe('1.1');
  });
  test('fees round up, conversions round down, gas comes off the final amount', () => {
    const r = quoteReceipt({ amountMinor: 10_001n, developerFeeMinor: 100n, from: 'usd', to: 'eur', rate: '0.92592592', gasFeeMinor: 0n });
    // 99.01 after the developer fee; 0.5 % is 0.49505 → 0.50; 98.51 × 0.92592592 = 91.2129… → 91.21.
    expect(r).toMatchObject({ exchangeFeeMinor: 50n, subtotalMinor: 9_851n, finalMinor: 9_121n });
    const onramp = quoteReceipt({ amountMinor: 10_000n, developerFeeMinor: 0n, from: 'usd', to: 'usdc', rate: '1', gasFeeMinor: 391_000n });
    expect(onramp).toMatchObject({ exchangeFeeMinor: 10n, subtotalMinor: 9_990n, finalMinor: 99_900_000n - 391_000n });
    expect(() => quoteReceipt({ amountMinor: 100n, developerFeeMinor: 0n, from: 'usd', to: 'usdc', rate: '1', gasFeeMinor: 2_000_000n })).toThrow(/nothing would arrive/);
  });
  test('swift_charges: who pays the 15.00 sending fee and the 25.00 correspondent fees', () => {
    expect(swiftChargesSplit('sha')).toEqual({ senderFeeMinor: 1_500n, beneficiaryDeductionsMinor: 2_500n });
    expect(swiftChargesSplit('our')).toEqual({ senderFeeMinor: 4_000n, beneficiaryDeductionsMinor: 0n });
    expect(swiftChargesSplit('ben')).toEqual({ senderFeeMinor: 0n, beneficiaryDeductionsMinor: 4_000n });
    // The sender's part comes off the final amount, like gas.
    const our = quoteReceipt({ amountMinor: 100_000n, developerFeeMinor: 0n, from: 'usd', to: 'usd', rate: '1', gasFeeMinor: 0n, swiftFeeMinor: 4_000n });
    expect(our).toMatchObject({ exchangeFeeMinor: 0n, swiftFeeMinor: 4_000n, finalMinor: 96_000n });
  });
});

test('every transfer posting set balances per currency, FX included', () => {
  const m: TransferMoney = {
    transferId: 'tr_x', customerId: 'cus_x', developerId: 'dev_x', sourceRail: 'sepa', sourceCurrency: 'eur', destinationRail: 'base',
    destinationCurrency: 'usdc', amountMinor: 10_000n, developerFeeMinor: 100n, exchangeFeeMinor: 50n, subtotalMinor: 9_850n,
    gasFeeMinor: 400_000n, swiftFeeMinor: 0n, finalMinor: 106_000_000n, sourceAccountId: null, destinationAccountId: null,
  };
  // The same money from and to platform accounts.
  const accounts: TransferMoney = { ...m, sourceAccountId: 'acct_a', destinationAccountId: 'acct_b' };
  // A SWIFT payout whose sender pays the fees (swift_charges our), in one currency and from euros.
  const swift: TransferMoney = { ...m, destinationRail: 'swift', destinationCurrency: 'usd', gasFeeMinor: 0n, swiftFeeMinor: 4_000n, finalMinor: 5_850n, sourceCurrency: 'usd', sourceRail: 'ach' };
  const swiftFx: TransferMoney = { ...m, destinationRail: 'swift', destinationCurrency: 'usd', gasFeeMinor: 0n, swiftFeeMinor: 1_500n, finalMinor: 9_138n };
  for (const postings of [m, accounts, swift, swiftFx].flatMap((x) => [depositPostings(x), payoutPostings(x), payoutReversalPostings(x), refundPostings(x)])) {
    const sums = new Map<string, bigint>();
    for (const p of postings) sums.set(p.account.currency, (sums.get(p.account.currency) ?? 0n) + p.amountMinor);
    for (const sum of sums.values()) expect(sum).toBe(0n);
  }
});
