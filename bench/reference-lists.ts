// The reference lists of the tests and benchmarks, all in the repository: the shipped snapshot
// (data/sanctions-snapshot: OFAC SDN and Consolidated, UN) plus the fixtures of
// test/fixtures/sanctions-lists (BIS, EU and UK samples, an older OFAC set, synthetic people), read in
// place through a manifest and parsed exactly as official downloads are.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { SHIPPED_SNAPSHOT_DIR, readListsFromDirectory } from '../src/sanctions/screener';
import type { ListedEntity } from '../src/sanctions/types';

export const LIST_FIXTURES = path.join(__dirname, '../test/fixtures/sanctions-lists');

/** A fixture's bytes, uncompressed: `listFixture('us-bis-dpl-2022-09.txt')`. */
export function listFixture(name: string): Buffer {
  return gunzipSync(fs.readFileSync(path.join(LIST_FIXTURES, `${name}.gz`)));
}

/** A file of the shipped snapshot, uncompressed: `snapshotFile('un_sc/consolidated.xml')`. */
export function snapshotFile(name: string): Buffer {
  return gunzipSync(fs.readFileSync(path.join(SHIPPED_SNAPSHOT_DIR, `${name}.gz`)));
}

/** Source id → its files, as paths (absolute) the manifest names. */
function referenceSources(): Record<string, Record<string, string>> {
  const snapshot = JSON.parse(fs.readFileSync(path.join(SHIPPED_SNAPSHOT_DIR, 'manifest.json'), 'utf8')).sources as Record<string, Record<string, string>>;
  const sources: Record<string, Record<string, string>> = {};
  for (const [id, files] of Object.entries(snapshot)) {
    sources[id] = Object.fromEntries(Object.entries(files).map(([name, rel]) => [name, path.join(SHIPPED_SNAPSHOT_DIR, rel)]));
  }
  const fixture = (name: string) => path.join(LIST_FIXTURES, `${name}.gz`);
  sources.us_bis_dpl = { 'dpl.txt': fixture('us-bis-dpl-2022-09.txt') };
  sources.eu_fsf = { 'eu_fsf.xml': fixture('eu-fsf-sample-2020-04-15.xml') };
  sources.gb_hmt_ofsi = { 'ConList.csv': fixture('uk-ofsi-sample-2020-04-27.csv') };
  return sources;
}

/** Writes `{dir}/manifest.json` naming the reference lists; point SANCTIONS_DATA_DIR at `dir`. */
export function writeReferenceManifest(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ sources: referenceSources() }, null, 2));
  return dir;
}

export async function loadReferenceEntities(): Promise<ListedEntity[]> {
  const dir = writeReferenceManifest(fs.mkdtempSync(path.join(os.tmpdir(), 'reference-lists-')));
  try {
    return (await readListsFromDirectory(dir)).entities;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The 50,000 synthetic people: true negatives, nobody on any list. */
export function loadNegatives(): { name: string; dateOfBirth: string; nationality: string }[] {
  const rows = parse(listFixture('synthetic-people.csv'), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  return rows.map((r) => ({ name: r.full_name, dateOfBirth: r.date_of_birth, nationality: r.nationality }));
}
