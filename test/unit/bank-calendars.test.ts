import { easterSunday, federalReserveHolidays, isBankBusinessDay, target2ClosingDays } from '../../src/domain/bank-calendars';
import { RAILS, realSettlementTime, type FiatRailProfile } from '../../src/domain/rails';

// The published calendars: the Federal Reserve's holiday schedules (a Saturday holiday leaves the
// Banks open on the Friday before) and TARGET2's closing days, 2026 to 2028.
const FEDERAL_RESERVE = {
  2026: ['2026-01-01', '2026-01-19', '2026-02-16', '2026-05-25', '2026-06-19', '2026-09-07', '2026-10-12', '2026-11-11', '2026-11-26', '2026-12-25'],
  2027: ['2027-01-01', '2027-01-18', '2027-02-15', '2027-05-31', '2027-07-05', '2027-09-06', '2027-10-11', '2027-11-11', '2027-11-25'],
  2028: ['2028-01-17', '2028-02-21', '2028-05-29', '2028-06-19', '2028-07-04', '2028-09-04', '2028-10-09', '2028-11-23', '2028-12-25'],
};
const TARGET2 = {
  2026: ['2026-01-01', '2026-04-03', '2026-04-06', '2026-05-01', '2026-12-25', '2026-12-26'],
  2027: ['2027-01-01', '2027-03-26', '2027-03-29', '2027-05-01', '2027-12-25', '2027-12-26'],
  2028: ['2028-01-01', '2028-04-14', '2028-04-17', '2028-05-01', '2028-12-25', '2028-12-26'],
};

test.each([2026, 2027, 2028] as const)('the Federal Reserve holidays of %i are the published ones', (year) => {
  expect([...federalReserveHolidays(year)].sort()).toEqual(FEDERAL_RESERVE[year]);
});

test.each([2026, 2027, 2028] as const)('TARGET2 closes on the published days of %i', (year) => {
  expect([...target2ClosingDays(year)].sort()).toEqual(TARGET2[year]);
});

test('Easter Sunday of known years', () => {
  expect([2024, 2025, 2026, 2027, 2028, 2038].map((y) => easterSunday(y).toISOString().slice(0, 10)))
    .toEqual(['2024-03-31', '2025-04-20', '2026-04-05', '2027-03-28', '2028-04-16', '2038-04-25']);
});

test('a Saturday holiday leaves the Federal Reserve open on the Friday before (2026-07-03, 2027-06-18, 2027-12-24)', () => {
  for (const day of ['2026-07-03', '2027-06-18', '2027-12-24']) expect(isBankBusinessDay('federal_reserve', new Date(`${day}T12:00:00Z`))).toBe(true);
  expect(isBankBusinessDay('federal_reserve', new Date('2026-11-26T12:00:00Z'))).toBe(false);
  expect(isBankBusinessDay('target2', new Date('2026-11-26T12:00:00Z'))).toBe(true);
});

const effectiveDay = (rail: 'ach' | 'ach_same_day' | 'sepa', at: string) => realSettlementTime(RAILS[rail] as FiatRailProfile, new Date(at)).toISOString().slice(0, 10);

test('effective dates skip the holidays of their rail\'s calendar', () => {
  // ACH submitted the day before Thanksgiving settles the Friday after it; SEPA that day settles on Thanksgiving.
  expect(effectiveDay('ach', '2026-11-25T15:00:00Z')).toBe('2026-11-27');
  expect(effectiveDay('sepa', '2026-11-25T10:00:00Z')).toBe('2026-11-26');
  // Christmas 2026 is a Friday: ACH on Thursday 24th settles Monday 28th; SEPA (25 and 26 closed) too.
  expect(effectiveDay('ach', '2026-12-24T15:00:00Z')).toBe('2026-12-28');
  expect(effectiveDay('sepa', '2026-12-24T10:00:00Z')).toBe('2026-12-28');
  // Same-day ACH on a holiday waits for the next business day; Good Friday and Easter Monday close SEPA only.
  expect(effectiveDay('ach_same_day', '2026-11-26T15:00:00Z')).toBe('2026-11-27');
  expect(effectiveDay('sepa', '2026-04-02T10:00:00Z')).toBe('2026-04-07');
  expect(effectiveDay('ach', '2026-04-02T15:00:00Z')).toBe('2026-04-03');
});
