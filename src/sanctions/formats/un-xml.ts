import { XMLParser } from 'fast-xml-parser';
import type { ListedEntity, ListedName, ParsedList } from '../types';
import { clean, parseListDate, uniqueCountries } from './common';

const arr = <T>(v: T | T[] | undefined): T[] => (v === undefined || v === null || (v as unknown) === '' ? [] : Array.isArray(v) ? v : [v]);
const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? clean(String(v)) : undefined);

/** The UN Security Council consolidated list (scsanctions.un.org …/consolidated.xml). */
export function parseUnXml(source: string, xml: Buffer): ParsedList {
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, trimValues: true }).parse(xml.toString('utf8'));
  const root = doc.CONSOLIDATED_LIST;
  const entities: ListedEntity[] = [];

  for (const p of arr<any>(root?.INDIVIDUALS?.INDIVIDUAL)) {
    const primary = [p.FIRST_NAME, p.SECOND_NAME, p.THIRD_NAME, p.FOURTH_NAME].map(text).filter(Boolean).join(' ');
    const names: ListedName[] = [{ value: primary, kind: 'primary' }];
    for (const a of arr<any>(p.INDIVIDUAL_ALIAS)) {
      const v = text(a.ALIAS_NAME);
      if (v) names.push({ value: v, kind: 'alias', weak: text(a.QUALITY) === 'Low' });
    }
    const original = text(p.NAME_ORIGINAL_SCRIPT);
    if (original) names.push({ value: original, kind: 'original_script' });
    const birthDates: string[] = [];
    for (const d of arr<any>(p.INDIVIDUAL_DATE_OF_BIRTH)) {
      const date = text(d.DATE) ? parseListDate(text(d.DATE)!) : undefined;
      if (date) birthDates.push(date);
      else if (text(d.YEAR)) birthDates.push(text(d.YEAR)!);
      else if (text(d.FROM_YEAR) && text(d.TO_YEAR)) {
        for (let y = Number(text(d.FROM_YEAR)); y <= Number(text(d.TO_YEAR)) && y - Number(text(d.FROM_YEAR)) <= 10; y++) birthDates.push(String(y));
      }
    }
    entities.push({
      id: `${source}:${text(p.REFERENCE_NUMBER) ?? text(p.DATAID)}`,
      source,
      entityType: 'individual',
      names: names.filter((n) => n.value),
      birthDates,
      countries: uniqueCountries([
        ...arr<any>(p.NATIONALITY?.VALUE).map(text),
        ...arr<any>(p.INDIVIDUAL_ADDRESS).map((a) => text(a?.COUNTRY)),
      ]),
      programs: [text(p.UN_LIST_TYPE)].filter(Boolean) as string[],
      listedOn: text(p.LISTED_ON),
      remarks: text(p.COMMENTS1),
      cryptoAddresses: [],
    });
  }

  for (const e of arr<any>(root?.ENTITIES?.ENTITY)) {
    const names: ListedName[] = [{ value: text(e.FIRST_NAME) ?? '', kind: 'primary' }];
    for (const a of arr<any>(e.ENTITY_ALIAS)) {
      const v = text(a.ALIAS_NAME);
      if (v) names.push({ value: v, kind: 'alias', weak: text(a.QUALITY) === 'Low' });
    }
    entities.push({
      id: `${source}:${text(e.REFERENCE_NUMBER) ?? text(e.DATAID)}`,
      source,
      entityType: 'business',
      names: names.filter((n) => n.value),
      birthDates: [],
      countries: uniqueCountries(arr<any>(e.ENTITY_ADDRESS).map((a) => text(a?.COUNTRY))),
      programs: [text(e.UN_LIST_TYPE)].filter(Boolean) as string[],
      listedOn: text(e.LISTED_ON),
      remarks: text(e.COMMENTS1),
      cryptoAddresses: [],
    });
  }
  const generated = root?.['@dateGenerated'] as string | undefined;
  return { entities: entities.filter((e) => e.names.length > 0), publishedOn: generated?.slice(0, 10) };
}
