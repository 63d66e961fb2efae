import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { listFixture, snapshotFile } from '../../bench/reference-lists';
import { parseOfacCsv } from '../../src/sanctions/formats/ofac-csv';
import { parseUnXml } from '../../src/sanctions/formats/un-xml';
import { parseEuFsfXml } from '../../src/sanctions/formats/eu-fsf-xml';
import { parseUkOfsiCsv } from '../../src/sanctions/formats/uk-ofsi-csv';
import { parseBisDplTsv } from '../../src/sanctions/formats/bis-dpl-tsv';
import { SOURCES, parseSource, sourceById } from '../../src/sanctions/sources';
import { readListsFromDirectory } from '../../src/sanctions/screener';

// Parsers against copies of the publishers' files (test/fixtures/sanctions-lists and the shipped
// snapshot), and against fixtures that follow the publisher's documented schema where no real copy
// is at hand. Pure logic: no stack needed.

const fixture = (p: string) => fs.readFileSync(path.join(__dirname, '../fixtures/sanctions', p));

describe('the source registry', () => {
  test('more than 25 sources across every region, each with an official https address and a parser', async () => {
    expect(SOURCES.length).toBeGreaterThan(25);
    expect(new Set(SOURCES.map((s) => s.id)).size).toBe(SOURCES.length);
    expect(new Set(SOURCES.map((s) => s.region))).toEqual(
      new Set(['United States', 'European Union', 'United Kingdom', 'United Nations', 'International', 'Asia-Pacific', 'Americas', 'Europe', 'Middle East']),
    );
    for (const s of SOURCES) {
      expect(s.files.length).toBeGreaterThan(0);
      for (const f of s.files) expect(f.url).toMatch(/^https:\/\//);
      expect(s.homepage).toMatch(/^https:\/\//);
    }
  });
});

describe('OFAC CSV', () => {
  test('the 2022 SDN triad: every record, aliases, addresses, remarks fields', () => {
    const list = parseOfacCsv('us_ofac_sdn', {
      primary: listFixture('ofac-sdn-2022-01-31/sdn.csv'), alt: listFixture('ofac-sdn-2022-01-31/alt.csv'), add: listFixture('ofac-sdn-2022-01-31/add.csv'),
    });
    // 9,044 rows; ent_num 2677 appears twice and is one listing.
    expect(list.entities).toHaveLength(9043);
    const byType = (t: string) => list.entities.filter((e) => e.entityType === t).length;
    expect(byType('individual')).toBe(4643);
    expect(byType('vessel')).toBe(420);
    expect(byType('aircraft')).toBe(280);
    expect(list.entities.reduce((n, e) => n + e.names.length - 1, 0)).toBe(12409 + 1);
    const zawahiri = list.entities.find((e) => e.id === 'us_ofac_sdn:2676')!;
    expect(zawahiri.names[0].value).toBe('Dr. Ayman AL ZAWAHIRI');
    expect(zawahiri.birthDates).toEqual(['1951-06-19']);
    expect(zawahiri.countries).toContain('EG');
    expect(zawahiri.programs).toEqual(['SDGT']);
    const crypto = list.entities.filter((e) => e.cryptoAddresses.length > 0);
    expect(crypto.length).toBeGreaterThan(10);
    expect(crypto[0].cryptoAddresses[0]).toEqual({ currency: expect.stringMatching(/^[A-Z]+$/), address: expect.any(String) });
  });

  test('the consolidated (non-SDN) set with comment overflow', () => {
    const list = parseOfacCsv('us_ofac_cons', {
      primary: snapshotFile('us_ofac_cons/cons_prim.csv'), alt: snapshotFile('us_ofac_cons/cons_alt.csv'),
      add: snapshotFile('us_ofac_cons/cons_add.csv'), comments: snapshotFile('us_ofac_cons/cons_comments.csv'),
    });
    expect(list.entities).toHaveLength(442);
    expect(list.entities.filter((e) => e.entityType === 'individual')).toHaveLength(79);
    const haniya = list.entities.find((e) => e.id === 'us_ofac_cons:9639')!;
    expect(haniya).toMatchObject({ birthDates: ['1962'], programs: ['NS-PLC'] });
  });
});

test('UN consolidated XML: individuals, entities, aliases, original script, dates', () => {
  const list = parseUnXml('un_sc', snapshotFile('un_sc/consolidated.xml'));
  expect(list.publishedOn).toBe('2026-02-27');
  expect(list.entities).toHaveLength(1003);
  expect(list.entities.filter((e) => e.entityType === 'individual')).toHaveLength(730);
  expect(list.entities.filter((e) => e.names.some((n) => n.kind === 'original_script'))).toHaveLength(336);
  const badege = list.entities.find((e) => e.id === 'un_sc:CDi.001')!;
  expect(badege).toMatchObject({ names: [{ value: 'ERIC BADEGE', kind: 'primary' }], birthDates: ['1971'], countries: expect.arrayContaining(['CD', 'RW']), programs: ['DRC'], listedOn: '2012-12-31' });
  expect(list.entities.some((e) => e.names.some((n) => n.weak))).toBe(true);
});

test('EU FSF XML sample', () => {
  const list = parseEuFsfXml('eu_fsf', listFixture('eu-fsf-sample-2020-04-15.xml'));
  expect(list.entities).toHaveLength(7);
  expect(list.publishedOn).toBe('2020-04-15');
  const first = list.entities[0];
  expect(first).toMatchObject({ id: 'eu_fsf:EU.2026.82', entityType: 'individual', countries: ['DZ'], programs: ['TAQA'], listedOn: '2008-07-03' });
  expect(first.names.map((n) => n.value)).toContain('Abdelhamid Abou Zeid');
  expect(first.birthDates).toContain('1965-12-12');
});

test('UK OFSI CSV sample: rows grouped by Group ID', () => {
  const list = parseUkOfsiCsv('gb_hmt_ofsi', listFixture('uk-ofsi-sample-2020-04-27.csv'));
  expect(list.entities).toHaveLength(6);
  expect(list.publishedOn).toBe('2020-04-27');
  const hojati = list.entities.find((e) => e.id === 'gb_hmt_ofsi:9053')!;
  expect(hojati.names).toEqual([{ value: 'Mohsen HOJATI', kind: 'primary', weak: false }, { value: 'محسن حجتی', kind: 'original_script' }]);
  expect(hojati.birthDates).toEqual(['1955-09-28']);
});

test('BIS Denied Persons List', () => {
  const list = parseBisDplTsv('us_bis_dpl', listFixture('us-bis-dpl-2022-09.txt'));
  expect(list.entities).toHaveLength(581);
  expect(list.entities[1]).toMatchObject({ names: [{ value: 'AARON ABRAHAM VILLA' }], listedOn: '2022-08-24', programs: ['DPL'] });
});

describe('formats without a real sample here (fixtures follow the published schema)', () => {
  test('Trade.gov Consolidated Screening List JSON, one list selected', async () => {
    const el = await parseSource(sourceById.get('us_bis_entity_list')!, { 'consolidated.json': fixture('csl.json') });
    expect(el.entities.map((e) => e.names[0].value)).toEqual(['ACME AEROSPACE RESEARCH INSTITUTE']);
    expect(el.entities[0]).toMatchObject({ entityType: 'business', countries: ['CN'], listedOn: '2020-06-05' });
    const itar = await parseSource(sourceById.get('us_state_itar_debarred')!, { 'consolidated.json': fixture('csl.json') });
    expect(itar.entities[0]).toMatchObject({ entityType: 'individual', birthDates: ['1971-03-02'], countries: ['RU'] });
  });

  test('World Bank debarments JSON', async () => {
    const list = await parseSource(sourceById.get('worldbank_debarred')!, { 'debarred.json': fixture('worldbank.json') });
    expect(list.entities).toHaveLength(2);
    expect(list.entities[0].names.map((n) => n.value)).toEqual(['Sunrise Construction Ltd.', 'Sunrise Builders Ltd.']);
    expect(list.entities[0]).toMatchObject({ countries: ['KE'], listedOn: '2019-03-14' });
  });

  test('INTERPOL red notices JSON pages', async () => {
    const list = await parseSource(sourceById.get('interpol_red_notices')!, { 'red_notices.json': fixture('interpol.json') });
    expect(list.entities[0]).toMatchObject({ names: [{ value: 'JOHN DOE-SMITH' }], birthDates: ['1980-05-12'], countries: ['GB', 'IE'] });
  });

  test('Canada SEMA XML', async () => {
    const list = await parseSource(sourceById.get('ca_sema')!, { 'sema-lmes.xml': fixture('sema-lmes.xml') });
    expect(list.entities).toHaveLength(2);
    expect(list.entities[0]).toMatchObject({ entityType: 'individual', names: [{ value: 'Sergei Borisovich Ivanov' }], birthDates: ['1953-01-31'], countries: ['RU'] });
    expect(list.entities[1].names.map((n) => n.value)).toEqual(['Belaruskali OAO', 'Belarusian Potash Company', 'BPC']);
  });

  test('Australia DFAT XLSX (rows of one reference are one listing)', async () => {
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('Consolidated List');
    sheet.addRow(['Reference', 'Name of Individual or Entity', 'Type', 'Name Type', 'Date of Birth', 'Place of Birth', 'Citizenship', 'Address', 'Additional Information', 'Listing Information', 'Committees', 'Control Date']);
    sheet.addRow(['8', 'Abu Bakr AL-BAGHDADI', 'Individual', 'Primary Name', '1971', 'Samarra, Iraq', 'Iraqi', '', 'Leader', '2014', '1267/1989/2253', '']);
    sheet.addRow(['8a', 'Ibrahim Awwad Ibrahim Ali AL-BADRI', 'Individual', 'Alias', '', '', '', '', '', '', '1267/1989/2253', '']);
    sheet.addRow(['9', 'Example Shipping Co', 'Entity', 'Primary Name', '', '', '', 'Pyongyang', '', '2017', '1718', '']);
    const buf = Buffer.from(await book.xlsx.writeBuffer());
    const list = await parseSource(sourceById.get('au_dfat')!, { 'regs-consolidated.xlsx': buf });
    expect(list.entities).toHaveLength(2);
    expect(list.entities[0]).toMatchObject({ id: 'au_dfat:8', entityType: 'individual', birthDates: ['1971'], countries: ['IQ'] });
    expect(list.entities[0].names.map((n) => n.kind)).toEqual(['primary', 'alias']);
  });

  test('FollowTheMoney JSON lines (aggregated feeds)', async () => {
    const list = await parseSource(sourceById.get('ua_nsdc')!, { 'entities.ftm.json': fixture('entities.ftm.json') });
    expect(list.entities).toHaveLength(2);
    expect(list.entities[0]).toMatchObject({ entityType: 'individual', birthDates: ['1969-09-09'], countries: ['UA'], listedOn: '2022-04-01' });
    expect(list.entities[1]).toMatchObject({ entityType: 'business', countries: ['CY'] });
  });
});

test('a data directory is read as `lists sync` writes it: {dir}/{source}/{file}', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lists-'));
  fs.mkdirSync(path.join(dir, 'us_bis_dpl'));
  fs.writeFileSync(path.join(dir, 'us_bis_dpl', 'dpl.txt'), listFixture('us-bis-dpl-2022-09.txt'));
  fs.mkdirSync(path.join(dir, 'un_sc'));
  const lists = await readListsFromDirectory(dir);
  expect(lists.loaded.map((l) => l.def.id)).toEqual(['us_bis_dpl']); // un_sc has no file yet
  expect(lists.loaded[0].sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(lists.entities).toHaveLength(581);
  fs.rmSync(dir, { recursive: true, force: true });
});
