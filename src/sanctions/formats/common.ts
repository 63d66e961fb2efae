import { countryToIso2 } from '../countries';

const MONTHS: Record<string, string> = {
  jan: '01', feb: '02', mar: '03', apr: '04', may: '05', jun: '06', jul: '07', aug: '08', sep: '09', oct: '10', nov: '11', dec: '12',
};

/** Dates as lists write them: "12 Jan 1965", "1965", "circa 1960", "1960-01-31", "31/01/1960", "01/31/1960" (us). */
export function parseListDate(raw: string, order: 'dmy' | 'mdy' = 'dmy'): string | undefined {
  const s = raw.trim().toLowerCase().replace(/^(circa|approximately|approx\.?|c\.)\s*/, '');
  let m = /^(\d{4})-(\d{2})-(\d{2})/.exec(s);
  if (m) return `${m[1]}-${m[2]}-${m[3]}`;
  m = /^(\d{1,2}) ([a-z]{3})[a-z]* (\d{4})$/.exec(s);
  if (m && MONTHS[m[2]]) return `${m[3]}-${MONTHS[m[2]]}-${m[1].padStart(2, '0')}`;
  m = /^([a-z]{3})[a-z]* (\d{4})$/.exec(s);
  if (m && MONTHS[m[1]]) return `${m[2]}-${MONTHS[m[1]]}`;
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(s);
  if (m) {
    const [day, month] = order === 'dmy' ? [m[1], m[2]] : [m[2], m[1]];
    return `${m[3]}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
  }
  m = /^(?:\d{2}\/){0,2}(\d{4})$/.exec(s) ?? /^(\d{4})$/.exec(s);
  if (m) return m[1];
  return undefined;
}

/** Year ranges ("1960 to 1962", "between 1960 and 1962") expand to each year. */
export function parseDateOrRange(raw: string, order: 'dmy' | 'mdy' = 'dmy'): string[] {
  const range = /(\d{4})\s*(?:to|-|and)\s*(?:[^\d]*?)(\d{4})/i.exec(raw);
  if (range && Number(range[2]) - Number(range[1]) <= 10 && Number(range[2]) >= Number(range[1])) {
    const years: string[] = [];
    for (let y = Number(range[1]); y <= Number(range[2]); y++) years.push(String(y));
    return years;
  }
  const one = parseListDate(raw, order);
  return one ? [one] : [];
}

export function uniqueCountries(values: (string | undefined | null)[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    const c = countryToIso2(v ?? undefined);
    if (c) out.add(c);
  }
  return [...out];
}

export const clean = (v: string | undefined | null) => {
  if (v === undefined || v === null) return undefined;
  const s = String(v).trim();
  return s === '' || s === '-0-' ? undefined : s;
};
