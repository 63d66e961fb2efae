import { parse } from 'csv-parse/sync';
import type { ParsedList } from '../types';
import { clean, parseListDate, uniqueCountries } from './common';

/** The BIS Denied Persons List, tab-separated with a header row. */
export function parseBisDplTsv(source: string, tsv: Buffer): ParsedList {
  const records = parse(tsv.toString('utf8'), { columns: true, delimiter: '\t', relax_quotes: true, relax_column_count: true, skip_empty_lines: true }) as Record<string, string>[];
  return {
    entities: records
      .filter((r) => clean(r.Name))
      .map((r, i) => ({
        id: `${source}:${i + 1}`,
        source,
        entityType: 'unknown' as const,
        names: [{ value: r.Name.trim(), kind: 'primary' as const }],
        birthDates: [],
        countries: uniqueCountries([r.Country]),
        programs: ['DPL'],
        listedOn: clean(r.Effective_Date) ? parseListDate(r.Effective_Date, 'mdy') : undefined,
        remarks: [clean(r.Action), clean(r.FR_Citation)].filter(Boolean).join('; ') || undefined,
        cryptoAddresses: [],
      })),
  };
}
