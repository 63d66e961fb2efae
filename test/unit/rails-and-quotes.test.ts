import { RAILS, realSettlementTime, type FiatRailProfile } from '../../src/domain/rails';
import { RateSheetProvider, RateUnavailableError, SandboxRateProvider, quoteReceipt, swiftChargesSplit } from '../../src/domain/quote';
import { providerAvailability } from '../../src/providers/availability';
import { OperatorReviewIdentityProvider, type VerificationRequest } from '../../src/providers/identity-verification';
import { depositPostings, payoutPostings, payoutReversalPostings, refundPostings, type TransferMoney } from '../../src/domain/transfers';

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

describe('live fails closed (src/providers/availability.ts)', () => {
  const noBank = { RAIL_PROVIDERS: {}, SANDBOX_BANK_FILES: 'off' } as const;
  const availability = providerAvailability({ EVM_RPC_URLS: { base: 'https://base.example/rpc' }, LIVE_FX_RATES: {}, ...noBank });
  test('the sandbox has every rail; live only the chains with an RPC address', () => {
    for (const rail of Object.keys(RAILS) as (keyof typeof RAILS)[]) expect(availability.railUnavailable('sandbox', rail)).toBeUndefined();
    expect(availability.railUnavailable('production', 'base')).toBeUndefined();
    expect(availability.railUnavailable('production', 'ethereum')).toMatch(/no RPC address/);
    expect(availability.railUnavailable('production', 'ach')).toMatch(/no live provider/);
    expect(availability.railUnavailable('production', 'solana')).toMatch(/no RPC address configured \(SOLANA_RPC_URL\)/);
    expect(availability.railUnavailable('production', 'stellar')).toMatch(/simulator only/);
    expect(availability.live.real.rails).toEqual(['base']);
    const withSolana = providerAvailability({ EVM_RPC_URLS: {}, SOLANA_RPC_URL: 'https://solana.example/rpc', LIVE_FX_RATES: {}, ...noBank });
    expect(withSolana.railUnavailable('production', 'solana')).toBeUndefined();
    expect(withSolana.live.real.rails).toEqual(['solana']);
    expect(availability.marketRates('production')).toBe(false);
    expect(availability.marketRates('sandbox')).toBe(true);
    expect(providerAvailability({ EVM_RPC_URLS: {}, LIVE_FX_RATES: { eur: '1.1' }, ...noBank }).marketRates('production')).toBe(true);
  });
  test('a fiat rail is live where RAIL_PROVIDERS gives it the bank\'s files; the sandbox bank files never make a rail live', () => {
    const withBank = providerAvailability({ EVM_RPC_URLS: {}, LIVE_FX_RATES: {}, RAIL_PROVIDERS: { ach: 'bank_files', ach_same_day: 'bank_files' }, SANDBOX_BANK_FILES: 'off' });
    expect(withBank.railUnavailable('production', 'ach')).toBeUndefined();
    expect(withBank.railUnavailable('production', 'ach_same_day')).toBeUndefined();
    expect(withBank.railUnavailable('production', 'ach_push')).toMatch(/no live provider/);
    expect(withBank.railUnavailable('production', 'sepa')).toMatch(/no live provider/);
    expect(withBank.live.real.rails).toEqual(['ach', 'ach_same_day']);
    const sandboxFiles = providerAvailability({ EVM_RPC_URLS: {}, LIVE_FX_RATES: {}, RAIL_PROVIDERS: {}, SANDBOX_BANK_FILES: 'on' });
    expect(sandboxFiles.railUnavailable('production', 'ach')).toMatch(/no live provider/);
  });
  test('a live rate sheet answers pegs without rates, and refuses what it does not price', async () => {
    const empty = new RateSheetProvider({}, 'live');
    expect(await empty.rate('usdc', 'usd')).toBe('1');
    expect(await empty.rate('usdt', 'usdc')).toBe('1');
    await expect(empty.rate('eth', 'usdc')).rejects.toBeInstanceOf(RateUnavailableError);
    expect(await new RateSheetProvider({ eth: '3000' }, 'live').rate('eth', 'usdc')).toBe('3000');
  });
  test('without a vendor, a complete live submission goes to manual review, an incomplete one says what is missing', async () => {
    const request: VerificationRequest = {
      customer: { id: 'cus_1', type: 'individual', email: 'jane@example.com', first_name: 'Jane', last_name: 'Doe', business_name: null, date_of_birth: '1990-01-01', address: { line1: '1 Market St', city: 'SF', postal_code: '94105', country: 'US' } as never },
      documentType: 'passport', documentFront: Buffer.from('front'), selfie: Buffer.from('selfie'), submissionNumber: 1, beneficialOwnerCount: 0,
    };
    const vendor = new OperatorReviewIdentityProvider();
    expect(await vendor.verify(request)).toEqual({ outcome: 'manual_review', reasons: ['no_identity_vendor_configured'] });
    expect(await vendor.verify({ ...request, selfie: null })).toEqual({ outcome: 'incomplete', reasons: ['selfie_missing'] });
  });
});
