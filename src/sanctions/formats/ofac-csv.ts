import { parse } from 'csv-parse/sync';
import type { ListedEntity, ParsedList } from '../types';
import { clean, parseDateOrRange, uniqueCountries } from './common';

/**
 * OFAC's legacy CSV set (SDN: sdn.csv, alt.csv, add.csv, sdn_comments.csv; non-SDN: cons_prim.csv,
 * cons_alt.csv, cons_add.csv, cons_comments.csv). No header, Latin-1, `-0-` for empty. Birth dates,
 * nationality and digital-currency addresses live only in the free-text remarks.
 */
export function parseOfacCsv(source: string, files: { primary: Buffer; alt?: Buffer; add?: Buffer; comments?: Buffer }): ParsedList {
  const rows = (buf?: Buffer) =>
    buf ? (parse(buf.toString('latin1'), { relax_quotes: true, relax_column_count: true, skip_empty_lines: true, trim: true }) as string[][]) : [];

  const overflow = new Map<string, string>();
  for (const r of rows(files.comments)) if (clean(r[1])) overflow.set(r[0], (overflow.get(r[0]) ?? '') + r[1]);

  const entities = new Map<string, ListedEntity>();
  for (const r of rows(files.primary)) {
    const [num, name, type, program] = r;
    if (!clean(num) || !clean(name)) continue;
    const remarks = [clean(r[11]), overflow.get(num)].filter(Boolean).join('');
    const t = clean(type)?.toLowerCase();
    const existing = entities.get(num);
    if (existing) {
      // The same ent_num twice (it happens in real files): one listing with both names.
      existing.names.push({ value: t === 'individual' ? naturalOrder(name) : name, kind: 'alias' });
      continue;
    }
    entities.set(num, {
      id: `${source}:${num}`,
      source,
      entityType: t === 'individual' ? 'individual' : t === 'vessel' ? 'vessel' : t === 'aircraft' ? 'aircraft' : 'business',
      names: [{ value: t === 'individual' ? naturalOrder(name) : name, kind: 'primary' }],
      birthDates: remarksBirthDates(remarks),
      countries: remarksCountries(remarks),
      programs: (clean(program) ?? '').split(/\]\s*\[/).map((p) => p.replace(/[[\]]/g, '').trim()).filter(Boolean),
      remarks: remarks || undefined,
      cryptoAddresses: remarksCrypto(remarks),
    });
  }
  for (const r of rows(files.alt)) {
    const e = entities.get(r[0]);
    const alias = clean(r[3]);
    if (e && alias) e.names.push({ value: e.entityType === 'individual' ? naturalOrder(alias) : alias, kind: 'alias', weak: /weak/i.test(r[4] ?? '') });
  }
  for (const r of rows(files.add)) {
    const e = entities.get(r[0]);
    const country = clean(r[4]);
    if (e && country) e.countries = uniqueCountries([...e.countries, country]);
  }
  return { entities: [...entities.values()] };
}

/** OFAC writes people as "LAST, First Middle": turn it into "First Middle LAST". */
function naturalOrder(name: string): string {
  const parts = name.split(',');
  return parts.length === 2 && parts[1].trim() ? `${parts[1].trim()} ${parts[0].trim()}` : name;
}

function remarksBirthDates(remarks: string): string[] {
  const out: string[] = [];
  for (const m of remarks.matchAll(/DOB ([^;]+)/g)) {
    for (const part of m[1].split(/,\s*(?=\d|circa|[A-Z][a-z]{2} \d{4})/)) out.push(...parseDateOrRange(part.trim()));
  }
  return [...new Set(out)];
}

function remarksCountries(remarks: string): string[] {
  const names: string[] = [];
  for (const m of remarks.matchAll(/(?:nationality|citizen|Nationality of Registration)\s+([^;.]+)/gi)) names.push(m[1].trim());
  // Place of birth: "POB Giza, Egypt" names the country last.
  for (const m of remarks.matchAll(/POB ([^;]+)/g)) names.push(m[1].split(',').pop()!.trim());
  return uniqueCountries(names);
}

function remarksCrypto(remarks: string) {
  const out: { currency: string; address: string }[] = [];
  for (const m of remarks.matchAll(/Digital Currency Address - ([A-Z0-9]+)\s+([A-Za-z0-9]+)/g)) out.push({ currency: m[1], address: m[2] });
  return out;
}
