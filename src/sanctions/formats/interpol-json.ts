import type { ListedEntity, ParsedList } from '../types';

/**
 * INTERPOL public red notices (ws-public.interpol.int/notices/v1/red, HAL+JSON pages:
 * _embedded.notices[] with entity_id, forename, name, date_of_birth "YYYY/MM/DD", nationalities).
 * `lists sync` stores every page; the parser takes them concatenated as a JSON array of pages.
 */
export function parseInterpolJson(source: string, json: Buffer): ParsedList {
  const doc = JSON.parse(json.toString('utf8')) as InterpolPage | InterpolPage[];
  const pages = Array.isArray(doc) ? doc : [doc];
  const entities: ListedEntity[] = [];
  for (const page of pages) {
    for (const n of page._embedded?.notices ?? []) {
      const name = [n.forename, n.name].filter(Boolean).join(' ').trim();
      if (!name) continue;
      entities.push({
        id: `${source}:${n.entity_id}`,
        source,
        entityType: 'individual',
        names: [{ value: name, kind: 'primary' }],
        birthDates: n.date_of_birth ? [n.date_of_birth.replace(/\//g, '-')] : [],
        countries: (n.nationalities ?? []).filter((c) => /^[A-Z]{2}$/.test(c)),
        programs: ['Red Notice'],
        cryptoAddresses: [],
      });
    }
  }
  return { entities };
}

interface InterpolPage {
  _embedded?: { notices?: { entity_id: string; forename?: string; name?: string; date_of_birth?: string; nationalities?: string[] }[] };
}
