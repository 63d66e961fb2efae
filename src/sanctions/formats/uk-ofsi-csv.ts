import { parse } from 'csv-parse/sync';
import type { ListedEntity, ParsedList } from '../types';
import { clean, parseListDate, uniqueCountries } from './common';

/**
 * OFSI Consolidated List CSV (ConList.csv): a "Last Updated" line, then one row per name variant;
 * rows with the same Group ID are one listed person or entity.
 */
export function parseUkOfsiCsv(source: string, csv: Buffer): ParsedList {
  const lines = csv.toString('utf8').replace(/^\uFEFF/, '');
  const firstBreak = lines.indexOf('\n');
  const updated = /Last Updated,(\d{2}\/\d{2}\/\d{4})/.exec(lines.slice(0, firstBreak))?.[1];
  const records = parse(lines.slice(firstBreak + 1), { columns: true, relax_quotes: true, relax_column_count: true, skip_empty_lines: true }) as Record<string, string>[];
  const groups = new Map<string, ListedEntity>();
  for (const r of records) {
    const id = clean(r['Group ID']);
    if (!id) continue;
    const name = ['Name 1', 'Name 2', 'Name 3', 'Name 4', 'Name 5', 'Name 6'].map((k) => clean(r[k])).filter(Boolean).join(' ');
    let e = groups.get(id);
    if (!e) {
      const type = (clean(r['Group Type']) ?? '').toLowerCase();
      e = {
        id: `${source}:${id}`,
        source,
        entityType: type === 'individual' ? 'individual' : type === 'entity' ? 'business' : type === 'ship' ? 'vessel' : 'unknown',
        names: [],
        birthDates: [],
        countries: [],
        programs: [],
        listedOn: clean(r['Listed On']) ? parseListDate(r['Listed On']) : undefined,
        remarks: clean(r['Other Information']),
        cryptoAddresses: [],
      };
      groups.set(id, e);
    }
    if (name) e.names.push({ value: name, kind: r['Alias Type'] === 'Prime Alias' ? 'primary' : 'alias', weak: /low/i.test(r['Alias Quality'] ?? '') });
    const script = clean(r['Name Non-Latin Script']);
    if (script && !e.names.some((n) => n.value === script)) e.names.push({ value: script, kind: 'original_script' });
    const dob = clean(r.DOB) ? parseListDate(r.DOB.replace(/^dd\/mm\//i, '')) : undefined;
    if (dob && !e.birthDates.includes(dob)) e.birthDates.push(dob);
    e.countries = uniqueCountries([...e.countries, r.Nationality, r['Country of Birth'], r.Country]);
    const regime = clean(r.Regime);
    if (regime && !e.programs.includes(regime)) e.programs.push(regime);
  }
  for (const e of groups.values()) e.names.sort((a, b) => (a.kind === 'primary' ? -1 : b.kind === 'primary' ? 1 : 0));
  return { entities: [...groups.values()].filter((e) => e.names.length > 0), publishedOn: updated ? parseListDate(updated) : undefined };
}
