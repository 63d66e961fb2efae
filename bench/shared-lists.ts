// The real list files in ../shared/sanctions-data, parsed as the product parses official downloads.
// Reference data for tests and benchmarks only: read in place, never copied into the project.
import fs from 'node:fs';
import path from 'node:path';
import { parseBisDplTsv } from '../src/sanctions/formats/bis-dpl-tsv';
import { parseEuFsfXml } from '../src/sanctions/formats/eu-fsf-xml';
import { parseOfacCsv } from '../src/sanctions/formats/ofac-csv';
import { parseUkOfsiCsv } from '../src/sanctions/formats/uk-ofsi-csv';
import { parseUnXml } from '../src/sanctions/formats/un-xml';
import type { ListedEntity } from '../src/sanctions/types';

export const SHARED_DATA = process.env.SHARED_SANCTIONS_DATA ?? path.join(__dirname, '../../shared/sanctions-data');

const read = (p: string) => fs.readFileSync(path.join(SHARED_DATA, p));

/** Matching data: the 2024 SDN primaries with the 2026 aliases and addresses that resolve (see the data README). */
export function loadSharedEntities(): ListedEntity[] {
  const sdn = parseOfacCsv('us_ofac_sdn', {
    primary: read('ofac/sdn_2024-05-03/sdn.csv'),
    alt: read('ofac/sdn_2026-06-02_partial/alt.csv'),
    add: read('ofac/sdn_2026-06-02_partial/add.csv'),
  });
  const cons = parseOfacCsv('us_ofac_cons', {
    primary: read('ofac/cons_2025-12-19/cons_prim.csv'),
    alt: read('ofac/cons_2025-12-19/cons_alt.csv'),
    add: read('ofac/cons_2025-12-19/cons_add.csv'),
    comments: read('ofac/cons_2025-12-19/cons_comments.csv'),
  });
  return [
    ...sdn.entities,
    ...cons.entities,
    ...parseUnXml('un_sc', read('un/un_consolidated_2026-02-27.xml')).entities,
    ...parseBisDplTsv('us_bis_dpl', read('us_bis/dpl_2022-09.txt')).entities,
    ...parseEuFsfXml('eu_fsf', read('eu/eu_fsf_sample_2020-04-15.xml')).entities,
    ...parseUkOfsiCsv('gb_hmt', read('uk/ofsi_conlist_sample_2020-04-27.csv')).entities,
  ];
}

export function loadNegatives(): { name: string; dateOfBirth: string; nationality: string }[] {
  const lines = read('eval/synthetic_people_negatives.csv').toString('utf8').trim().split('\n').slice(1);
  return lines.map((l) => {
    const c = l.split(',');
    return { name: c[0], dateOfBirth: c[5], nationality: c[7] };
  });
}
