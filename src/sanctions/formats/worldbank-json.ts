import type { ParsedList } from '../types';
import { clean, parseListDate, uniqueCountries } from './common';

/**
 * World Bank debarred firms and individuals (the JSON service behind worldbank.org/debarr:
 * response.ZPROCSUPP[] with SUPP_NAME, COUNTRY_NAME, DEBAR_FROM_DATE, DEBAR_REASON, …).
 */
export function parseWorldBankJson(source: string, json: Buffer): ParsedList {
  const doc = JSON.parse(json.toString('utf8')) as { response?: { ZPROCSUPP?: Record<string, string>[] } };
  const rows = doc.response?.ZPROCSUPP ?? [];
  return {
    entities: rows
      .filter((r) => clean(r.SUPP_NAME))
      .map((r, i) => ({
        id: `${source}:${clean(r.SUPP_ID) ?? i + 1}`,
        source,
        entityType: 'unknown' as const,
        names: [
          { value: r.SUPP_NAME.trim(), kind: 'primary' as const },
          ...(clean(r.ADD_SUPP_INFO) ?? '').split(/;\s*/).map((s) => /^(?:f\/k\/a|a\/k\/a|aka|fka)\s+(.+)$/i.exec(s.trim())?.[1]).filter((v): v is string => !!v).map((value) => ({ value, kind: 'alias' as const })),
        ],
        birthDates: [],
        countries: uniqueCountries([r.COUNTRY_NAME]),
        programs: ['World Bank debarment'],
        listedOn: clean(r.DEBAR_FROM_DATE) ? parseListDate(r.DEBAR_FROM_DATE) : undefined,
        remarks: clean(r.DEBAR_REASON),
        cryptoAddresses: [],
      })),
  };
}
