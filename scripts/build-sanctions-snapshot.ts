// Builds the sanctions-list snapshot shipped for the embedded default (docs/SANCTIONS.md):
// `npx tsx scripts/build-sanctions-snapshot.ts REFERENCE_DIR` writes data/sanctions-snapshot/ from dated copies of the publishers' files,
// the public-domain US lists (OFAC SDN, OFAC Consolidated) and the UN Security Council list, each file
// gzip-compressed, with a manifest naming the files and each list's publication date. It is loaded
// only when SANCTIONS_DATA_DIR holds no lists; `npm run cli -- lists sync` replaces it.
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

if (!process.argv[2]) {
  console.error('usage: npx tsx scripts/build-sanctions-snapshot.ts REFERENCE_DIR');
  process.exit(2);
}
const reference = path.resolve(process.argv[2]);
const out = path.join(__dirname, '../data/sanctions-snapshot');

/** Source id → its publication date and its files (name under the source → path under REFERENCE_DIR). */
const LISTS: Record<string, { publishedOn: string; files: Record<string, string> }> = {
  // The 2024-05-03 primaries with the 2026-06-02 aliases and addresses (rows that do not resolve are
  // dropped by the parser): dated by the older part.
  us_ofac_sdn: {
    publishedOn: '2024-05-03',
    files: { 'sdn.csv': 'ofac/sdn_2024-05-03/sdn.csv', 'alt.csv': 'ofac/sdn_2026-06-02_partial/alt.csv', 'add.csv': 'ofac/sdn_2026-06-02_partial/add.csv' },
  },
  us_ofac_cons: {
    publishedOn: '2025-12-19',
    files: {
      'cons_prim.csv': 'ofac/cons_2025-12-19/cons_prim.csv', 'cons_alt.csv': 'ofac/cons_2025-12-19/cons_alt.csv',
      'cons_add.csv': 'ofac/cons_2025-12-19/cons_add.csv', 'cons_comments.csv': 'ofac/cons_2025-12-19/cons_comments.csv',
    },
  },
  un_sc: { publishedOn: '2026-02-27', files: { 'consolidated.xml': 'un/un_consolidated_2026-02-27.xml' } },
};

fs.rmSync(out, { recursive: true, force: true });
const sources: Record<string, Record<string, string>> = {};
const publishedOn: Record<string, string> = {};
for (const [id, list] of Object.entries(LISTS)) {
  fs.mkdirSync(path.join(out, id), { recursive: true });
  sources[id] = {};
  publishedOn[id] = list.publishedOn;
  for (const [name, rel] of Object.entries(list.files)) {
    // Node writes no time into the gzip header: the same input gives the same bytes.
    fs.writeFileSync(path.join(out, id, `${name}.gz`), gzipSync(fs.readFileSync(path.join(reference, rel)), { level: 9 }));
    sources[id][name] = `${id}/${name}.gz`;
  }
}
fs.writeFileSync(path.join(out, 'manifest.json'), `${JSON.stringify({
  snapshot: 'Public-domain and open government sanctions lists, shipped so that a first start screens without internet. Replace with `npm run cli -- lists sync`.',
  published_on: publishedOn,
  sources,
}, null, 2)}\n`);
console.log(`wrote ${out}`);
