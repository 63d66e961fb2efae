import { XMLParser } from 'fast-xml-parser';
import type { ParsedList } from '../types';
import { clean, parseDateOrRange, uniqueCountries } from './common';

const arr = <T>(v: T | T[] | undefined): T[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? clean(String(v)) : undefined);

/**
 * Canada's Consolidated Autonomous Sanctions List (Special Economic Measures Act, sema-lmes.xml):
 * <data-set><record> with Country, LastName, GivenName, EntityOrShip, DateOfBirthOrShipBuildDate,
 * Schedule, Item, DateOfListing, Aliases.
 */
export function parseCanadaSemaXml(source: string, xml: Buffer): ParsedList {
  const doc = new XMLParser({ parseTagValue: false, trimValues: true }).parse(xml.toString('utf8'));
  const records = arr<any>(doc['data-set']?.record);
  return {
    entities: records
      .map((r, i) => {
        const entityName = text(r.EntityOrShip);
        const person = [text(r.GivenName), text(r.LastName)].filter(Boolean).join(' ');
        const primary = entityName ?? person;
        const aliases = (text(r.Aliases) ?? '').split(/[;,]\s*/).map((a) => a.trim()).filter(Boolean);
        return {
          id: `${source}:${[text(r.Country), text(r.Schedule), text(r.Item)].filter(Boolean).join('/') || i + 1}`,
          source,
          entityType: entityName ? ('business' as const) : ('individual' as const),
          names: primary ? [{ value: primary, kind: 'primary' as const }, ...aliases.map((value) => ({ value, kind: 'alias' as const }))] : [],
          birthDates: text(r.DateOfBirthOrShipBuildDate) && !entityName ? parseDateOrRange(text(r.DateOfBirthOrShipBuildDate)!) : [],
          countries: uniqueCountries([text(r.Country)]),
          programs: [text(r.Country) ? `SEMA ${text(r.Country)}` : 'SEMA'],
          listedOn: text(r.DateOfListing),
          remarks: undefined,
          cryptoAddresses: [],
        };
      })
      .filter((e) => e.names.length > 0),
  };
}
