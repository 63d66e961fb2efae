import type { ListedEntity, ParsedList } from '../types';
import { uniqueCountries } from './common';

/**
 * FollowTheMoney entities, one JSON object per line (the format of aggregated feeds such as
 * OpenSanctions). Person, Organization, Company, LegalEntity, Vessel and Airplane become listed entities.
 */
export function parseFtmJsonl(source: string, jsonl: Buffer): ParsedList {
  const entities: ListedEntity[] = [];
  for (const line of jsonl.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as { id: string; schema: string; properties: Record<string, string[]>; first_seen?: string };
    const type =
      e.schema === 'Person' ? 'individual'
      : ['Organization', 'Company', 'LegalEntity', 'PublicBody'].includes(e.schema) ? 'business'
      : e.schema === 'Vessel' ? 'vessel'
      : e.schema === 'Airplane' ? 'aircraft'
      : undefined;
    if (!type) continue;
    const p = e.properties ?? {};
    const names = [
      ...(p.name ?? []).map((value, i) => ({ value, kind: i === 0 ? ('primary' as const) : ('alias' as const) })),
      ...(p.alias ?? []).map((value) => ({ value, kind: 'alias' as const })),
      ...(p.weakAlias ?? []).map((value) => ({ value, kind: 'alias' as const, weak: true })),
    ];
    if (names.length === 0) continue;
    entities.push({
      id: `${source}:${e.id}`,
      source,
      entityType: type,
      names,
      birthDates: p.birthDate ?? [],
      countries: uniqueCountries([...(p.nationality ?? []), ...(p.citizenship ?? []), ...(p.country ?? []), ...(p.jurisdiction ?? [])]),
      programs: p.program ?? p.topics ?? [],
      listedOn: p.createdAt?.[0]?.slice(0, 10) ?? e.first_seen?.slice(0, 10),
      remarks: p.notes?.[0],
      cryptoAddresses: [],
    });
  }
  return { entities };
}
