// Builds the sanctions-list fixtures the tests and `bench:screening` read (test/fixtures/sanctions-lists/):
// `npx tsx scripts/build-list-fixtures.ts REFERENCE_DIR` copies, from a folder of reference copies of
// official lists, the files that data/sanctions-snapshot does not already hold, gzip-compressed
// (Node writes no time into the header: the same input gives the same bytes). Run once when a
// reference copy changes; nothing reads REFERENCE_DIR at run time.
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';

const from = process.argv[2];
if (!from) {
  console.error('usage: npx tsx scripts/build-list-fixtures.ts REFERENCE_DIR');
  process.exit(2);
}
const out = path.join(__dirname, '../test/fixtures/sanctions-lists');

/** Fixture name → the reference file it is made from. */
const COPIES: Record<string, string> = {
  'ofac-sdn-2022-01-31/sdn.csv.gz': 'ofac/sdn_2022-01-31/sdn.csv',
  'ofac-sdn-2022-01-31/alt.csv.gz': 'ofac/sdn_2022-01-31/alt.csv',
  'ofac-sdn-2022-01-31/add.csv.gz': 'ofac/sdn_2022-01-31/add.csv',
  'us-bis-dpl-2022-09.txt.gz': 'us_bis/dpl_2022-09.txt',
  'eu-fsf-sample-2020-04-15.xml.gz': 'eu/eu_fsf_sample_2020-04-15.xml',
  'uk-ofsi-sample-2020-04-27.csv.gz': 'uk/ofsi_conlist_sample_2020-04-27.csv',
};

fs.rmSync(out, { recursive: true, force: true });
for (const [name, rel] of Object.entries(COPIES)) {
  fs.mkdirSync(path.dirname(path.join(out, name)), { recursive: true });
  fs.writeFileSync(path.join(out, name), gzipSync(fs.readFileSync(path.join(from, rel)), { level: 9 }));
}

// The synthetic people: only the columns the evaluation reads.
const people = parse(fs.readFileSync(path.join(from, 'eval/synthetic_people_negatives.csv')), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
const kept = people.map((p) => ({ full_name: p.full_name, date_of_birth: p.date_of_birth, nationality: p.nationality }));
fs.writeFileSync(path.join(out, 'synthetic-people.csv.gz'), gzipSync(stringify(kept, { header: true }), { level: 9 }));
console.log(`wrote ${out} (${kept.length} synthetic people)`);
