import type { ListedEntity, ParsedList } from '../types';
import { parseDateOrRange, uniqueCountries } from './common';

/**
 * The US Consolidated Screening List (Trade.gov, data.trade.gov …/consolidated.json): one feed for
 * the Commerce, State and Treasury export lists. `only` keeps the records of one list, as the CSL
 * names it in `source` (e.g. "Entity List (EL) - Bureau of Industry and Security").
 */
export function parseTradeCslJson(source: string, json: Buffer, only?: string): ParsedList {
  const doc = JSON.parse(json.toString('utf8')) as { results?: CslRecord[] } | CslRecord[];
  const records = Array.isArray(doc) ? doc : doc.results ?? [];
  const entities: ListedEntity[] = [];
  for (const r of records) {
    if (only && !(r.source ?? '').startsWith(only)) continue;
    if (!r.name) continue;
    const type = (r.type ?? '').toLowerCase();
    entities.push({
      id: `${source}:${r.id ?? r.entity_number ?? entities.length + 1}`,
      source,
      entityType: type === 'individual' ? 'individual' : type === 'entity' ? 'business' : type === 'vessel' ? 'vessel' : type === 'aircraft' ? 'aircraft' : 'unknown',
      names: [
        { value: r.name, kind: 'primary' },
        ...(r.alt_names ?? []).filter(Boolean).map((value) => ({ value, kind: 'alias' as const })),
      ],
      birthDates: (r.dates_of_birth ?? '').split(/;\s*/).filter(Boolean).flatMap((d) => parseDateOrRange(d)),
      countries: uniqueCountries([...(r.nationalities ?? []), ...(r.citizenships ?? []), ...(r.addresses ?? []).map((a) => a.country)]),
      programs: r.programs ?? [],
      listedOn: r.start_date ?? undefined,
      remarks: r.remarks ?? r.federal_register_notice ?? undefined,
      cryptoAddresses: [],
    });
  }
  return { entities };
}

interface CslRecord {
  id?: string;
  entity_number?: string | number;
  name?: string;
  alt_names?: string[] | null;
  type?: string | null;
  source?: string;
  programs?: string[];
  dates_of_birth?: string | null;
  nationalities?: string[] | null;
  citizenships?: string[] | null;
  addresses?: { country?: string }[];
  start_date?: string | null;
  remarks?: string | null;
  federal_register_notice?: string | null;
}
