import ExcelJS from 'exceljs';
import type { ListedEntity, ParsedList } from '../types';
import { clean, parseDateOrRange, uniqueCountries } from './common';

/**
 * Australia's DFAT Consolidated List (regs-consolidated.xlsx): one row per name; rows sharing a
 * Reference (e.g. "1", "1a") are one listing. Columns: Reference, Name of Individual or Entity,
 * Type, Name Type, Date of Birth, Place of Birth, Citizenship, Address, Additional Information,
 * Listing Information, Committees, Control Date.
 */
export async function parseDfatXlsx(source: string, xlsx: Buffer): Promise<ParsedList> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(xlsx as unknown as ArrayBuffer);
  const sheet = book.worksheets[0];
  const header: string[] = [];
  sheet.getRow(1).eachCell((cell, col) => (header[col] = String(cell.value ?? '').trim()));
  const col = (name: string) => header.findIndex((h) => h?.toLowerCase().startsWith(name.toLowerCase()));
  const c = {
    ref: col('Reference'), name: col('Name of Individual'), type: col('Type'), nameType: col('Name Type'),
    dob: col('Date of Birth'), citizenship: col('Citizenship'), committees: col('Committees'), listed: col('Listing Information'),
    info: col('Additional Information'),
  };
  const byRef = new Map<string, ListedEntity>();
  sheet.eachRow((row, n) => {
    if (n === 1) return;
    const cell = (i: number) => (i > 0 ? clean(String(row.getCell(i).value ?? '')) : undefined);
    const ref = cell(c.ref);
    const name = cell(c.name);
    if (!ref || !name) return;
    const base = ref.replace(/[a-z]+$/i, '');
    let e = byRef.get(base);
    if (!e) {
      const type = (cell(c.type) ?? '').toLowerCase();
      e = {
        id: `${source}:${base}`,
        source,
        entityType: type.startsWith('individual') ? 'individual' : type.startsWith('entity') ? 'business' : 'unknown',
        names: [],
        birthDates: [],
        countries: [],
        programs: [],
        remarks: cell(c.info),
        cryptoAddresses: [],
      };
      byRef.set(base, e);
    }
    e.names.push({ value: name, kind: /primary/i.test(cell(c.nameType) ?? '') ? 'primary' : 'alias' });
    for (const d of (cell(c.dob) ?? '').split(/[;,]\s*/)) e.birthDates.push(...parseDateOrRange(d));
    e.countries = uniqueCountries([...e.countries, cell(c.citizenship)]);
    const committee = cell(c.committees);
    if (committee && !e.programs.includes(committee)) e.programs.push(committee);
  });
  return { entities: [...byRef.values()] };
}
