import { XMLParser } from 'fast-xml-parser';
import type { ListedEntity, ListedName, ParsedList } from '../types';
import { clean, parseListDate } from './common';

const arr = <T>(v: T | T[] | undefined): T[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);

/** The EU Financial Sanctions Files XML (webgate.ec.europa.eu/fsd/fsf, export schema 1.1). */
export function parseEuFsfXml(source: string, xml: Buffer): ParsedList {
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, parseAttributeValue: false })
    .parse(xml.toString('utf8'));
  const root = doc.export;
  const entities: ListedEntity[] = [];
  for (const s of arr<any>(root?.sanctionEntity)) {
    const code = s.subjectType?.['@code'];
    const names: ListedName[] = [];
    for (const n of arr<any>(s.nameAlias)) {
      const whole = clean(n['@wholeName']) ?? [n['@firstName'], n['@middleName'], n['@lastName']].map(clean).filter(Boolean).join(' ');
      if (whole) names.push({ value: whole, kind: names.length === 0 ? 'primary' : 'alias', weak: n['@strong'] === 'false' });
    }
    const birthDates: string[] = [];
    for (const b of arr<any>(s.birthdate)) {
      const d = clean(b['@birthdate']) ? parseListDate(b['@birthdate']) : clean(b['@year']);
      if (d) birthDates.push(d);
    }
    const countries = [...arr<any>(s.citizenship), ...arr<any>(s.address)]
      .map((c) => clean(c['@countryIso2Code']))
      .filter((c): c is string => !!c && c !== '00');
    entities.push({
      id: `${source}:${clean(s['@euReferenceNumber']) ?? s['@logicalId']}`,
      source,
      entityType: code === 'person' ? 'individual' : code === 'enterprise' ? 'business' : 'unknown',
      names,
      birthDates,
      countries: [...new Set(countries)],
      programs: [...new Set(arr<any>(s.regulation).map((r) => clean(r['@programme'])).filter(Boolean) as string[])],
      listedOn: clean(s['@designationDate']),
      remarks: clean(typeof s.remark === 'string' ? s.remark : undefined),
      cryptoAddresses: [],
    });
  }
  return { entities: entities.filter((e) => e.names.length > 0), publishedOn: (root?.['@generationDate'] as string | undefined)?.slice(0, 10) };
}
