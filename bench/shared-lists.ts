// The real list files in ../shared/sanctions-data, read in place through a manifest (never copied
// into the project) and parsed exactly as official downloads are.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { readListsFromDirectory } from '../src/sanctions/screener';
import type { ListedEntity } from '../src/sanctions/types';

export const SHARED_DATA = path.resolve(process.env.SHARED_SANCTIONS_DATA ?? path.join(__dirname, '../../shared/sanctions-data'));

/**
 * Source id → the shared files standing in for its official download. OFAC SDN: the 2024
 * primaries with the 2026 aliases and addresses (rows that do not resolve are dropped), as the data
 * README advises for matching.
 */
const FILES: Record<string, Record<string, string>> = {
  us_ofac_sdn: {
    'sdn.csv': 'ofac/sdn_2024-05-03/sdn.csv',
    'alt.csv': 'ofac/sdn_2026-06-02_partial/alt.csv',
    'add.csv': 'ofac/sdn_2026-06-02_partial/add.csv',
  },
  us_ofac_cons: {
    'cons_prim.csv': 'ofac/cons_2025-12-19/cons_prim.csv',
    'cons_alt.csv': 'ofac/cons_2025-12-19/cons_alt.csv',
    'cons_add.csv': 'ofac/cons_2025-12-19/cons_add.csv',
    'cons_comments.csv': 'ofac/cons_2025-12-19/cons_comments.csv',
  },
  us_bis_dpl: { 'dpl.txt': 'us_bis/dpl_2022-09.txt' },
  un_sc: { 'consolidated.xml': 'un/un_consolidated_2026-02-27.xml' },
  eu_fsf: { 'eu_fsf.xml': 'eu/eu_fsf_sample_2020-04-15.xml' },
  gb_hmt_ofsi: { 'ConList.csv': 'uk/ofsi_conlist_sample_2020-04-27.csv' },
};

/** Writes `{dir}/manifest.json` naming the shared files; point SANCTIONS_DATA_DIR at `dir`. */
export function writeSharedManifest(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const sources: Record<string, Record<string, string>> = {};
  for (const [id, files] of Object.entries(FILES)) {
    sources[id] = Object.fromEntries(Object.entries(files).map(([name, rel]) => [name, path.join(SHARED_DATA, rel)]));
  }
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ sources }, null, 2));
  return dir;
}

export async function loadSharedEntities(): Promise<ListedEntity[]> {
  const dir = writeSharedManifest(fs.mkdtempSync(path.join(os.tmpdir(), 'shared-lists-')));
  try {
    return (await readListsFromDirectory(dir)).entities;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function loadNegatives(): { name: string; dateOfBirth: string; nationality: string }[] {
  const rows = parse(fs.readFileSync(path.join(SHARED_DATA, 'eval/synthetic_people_negatives.csv')), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  return rows.map((r) => ({ name: r.full_name, dateOfBirth: r.date_of_birth, nationality: r.nationality }));
}
