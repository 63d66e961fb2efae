// The days banks settle on (docs/BANK_FILES.md, "Bank calendars"). ACH and Fedwire follow the
// Federal Reserve's holiday schedule; SEPA follows TARGET2's closing days. No maintained package
// gives either calendar as the settlement systems define it (general holiday packages observe a
// Saturday holiday on the Friday; the Federal Reserve stays open then), so the published rules are
// written here and tested against the published calendars of 2026 to 2028.

export type BankCalendar = 'federal_reserve' | 'target2' | 'weekdays';

const utcDay = (year: number, month: number, day: number) => new Date(Date.UTC(year, month - 1, day));

/** The `nth` (1-based; -1 the last) `weekday` (0 Sunday) of a month. */
function nthWeekday(year: number, month: number, weekday: number, nth: number): Date {
  if (nth < 0) {
    const last = utcDay(year, month + 1, 0);
    return utcDay(year, month, last.getUTCDate() - ((last.getUTCDay() - weekday + 7) % 7));
  }
  const first = utcDay(year, month, 1);
  return utcDay(year, month, 1 + ((weekday - first.getUTCDay() + 7) % 7) + (nth - 1) * 7);
}

/** Easter Sunday of the Gregorian calendar (the anonymous Gregorian computus). */
export function easterSunday(year: number): Date {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  return utcDay(year, month, ((h + l - 7 * m + 114) % 31) + 1);
}

const key = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (d: Date, n: number) => new Date(d.getTime() + n * 86_400_000);

/**
 * The Federal Reserve Banks' holidays of a year: a fixed-date holiday on a Sunday is observed the
 * Monday after; on a Saturday the Banks are open the Friday before (no closure that week).
 */
export function federalReserveHolidays(year: number): Set<string> {
  const fixed = [utcDay(year, 1, 1), utcDay(year, 6, 19), utcDay(year, 7, 4), utcDay(year, 11, 11), utcDay(year, 12, 25)]
    .filter((d) => d.getUTCDay() !== 6).map((d) => (d.getUTCDay() === 0 ? addDays(d, 1) : d));
  const floating = [
    nthWeekday(year, 1, 1, 3), // Martin Luther King Jr.'s Birthday
    nthWeekday(year, 2, 1, 3), // Washington's Birthday
    nthWeekday(year, 5, 1, -1), // Memorial Day
    nthWeekday(year, 9, 1, 1), // Labor Day
    nthWeekday(year, 10, 1, 2), // Columbus Day
    nthWeekday(year, 11, 4, 4), // Thanksgiving Day
  ];
  return new Set([...fixed, ...floating].map(key));
}

/** TARGET2's closing days: New Year's Day, Good Friday, Easter Monday, 1 May, 25 and 26 December. */
export function target2ClosingDays(year: number): Set<string> {
  const easter = easterSunday(year);
  return new Set([utcDay(year, 1, 1), addDays(easter, -2), addDays(easter, 1), utcDay(year, 5, 1), utcDay(year, 12, 25), utcDay(year, 12, 26)].map(key));
}

const cache = new Map<string, Set<string>>();

/** Whether `day` (its UTC date) is a business day of the calendar: not a weekend, not a holiday of it. */
export function isBankBusinessDay(calendar: BankCalendar, day: Date): boolean {
  const weekday = day.getUTCDay();
  if (weekday === 0 || weekday === 6) return false;
  if (calendar === 'weekdays') return true;
  const year = day.getUTCFullYear();
  const cacheKey = `${calendar}:${year}`;
  let closed = cache.get(cacheKey);
  if (!closed) cache.set(cacheKey, closed = calendar === 'federal_reserve' ? federalReserveHolidays(year) : target2ClosingDays(year));
  return !closed.has(key(day));
}
