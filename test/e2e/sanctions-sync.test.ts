import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { listFixture, snapshotFile } from '../../bench/reference-lists';
import { SanctionsScreener } from '../../src/sanctions/screener';
import { httpFetchFile, syncLists } from '../../src/sanctions/sync';
import { stack, testDb, waitFor } from '../harness';

// `lists sync` against a publisher stand-in on loopback, and reloading the lists in a running process.

let server: http.Server;
let base: string;
let dpl = listFixture('us-bis-dpl-2022-09.txt');
const un = snapshotFile('un_sc/consolidated.xml');

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/www.bis.doc.gov/dpl/dpl.txt') return void res.end(dpl);
    if (req.url === '/scsanctions.un.org/resources/xml/en/consolidated.xml') return void res.end(un);
    res.statusCode = 404;
    res.end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** The official address, served by the stand-in: same path, loopback host. */
const viaStandIn = (url: string) => httpFetchFile(url.replace(/^https:\/\//, `${base}/`));

test('sync writes each source to its folder; a failing source is reported and keeps its old files', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sync-'));
  fs.mkdirSync(path.join(dir, 'eu_fsf'));
  fs.writeFileSync(path.join(dir, 'eu_fsf', 'eu_fsf.xml'), 'previous copy');
  const result = await syncLists({ dir, sources: ['us_bis_dpl', 'un_sc', 'eu_fsf'], fetchFile: viaStandIn });
  expect(result.synced).toEqual(['us_bis_dpl', 'un_sc']);
  expect(result.failed).toEqual([{ source: 'eu_fsf', error: expect.stringContaining('HTTP 404') }]);
  expect(fs.readFileSync(path.join(dir, 'us_bis_dpl', 'dpl.txt')).equals(dpl)).toBe(true);
  expect(fs.readFileSync(path.join(dir, 'eu_fsf', 'eu_fsf.xml'), 'utf8')).toBe('previous copy');
  expect(fs.readdirSync(dir).sort()).toEqual(['eu_fsf', 'un_sc', 'us_bis_dpl']);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('offline: every source fails clearly, nothing on disk changes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sync-'));
  const offline = async () => {
    throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } });
  };
  const result = await syncLists({ dir, sources: ['us_bis_dpl', 'un_sc'], fetchFile: offline });
  expect(result.synced).toEqual([]);
  expect(result.failed.map((f) => f.error)).toEqual(['fetch failed (ENOTFOUND)', 'fetch failed (ENOTFOUND)']);
  expect(fs.readdirSync(dir)).toEqual([]);
  await expect(syncLists({ dir, sources: ['nope'] })).rejects.toThrow('unknown source(s): nope');
});

test('a reload swaps in new list versions atomically; screenings record the version used', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sync-'));
  await syncLists({ dir, sources: ['us_bis_dpl'], fetchFile: viaStandIn });
  const screener = new SanctionsScreener({ db: testDb(), dataDir: dir, threshold: 0.8 });
  const first = await screener.load();
  expect(first).toEqual([expect.objectContaining({ source: 'us_bis_dpl', entityCount: 581 })]);
  const before = screener.screen({ name: 'AARON ABRAHAM VILLA' });
  expect(before).toMatchObject({ status: 'potential_match', dataSourcesChecked: 1, listVersionIds: [first[0].id] });
  // Asked again on the same lists: the same outcome (kept from the first time), in arrays of its own.
  const again = screener.screen({ name: 'AARON ABRAHAM VILLA' });
  expect(again).toEqual(before);
  expect(again.matches).not.toBe(before.matches);

  // The publisher drops a listing; the next sync brings a new version.
  dpl = Buffer.from(dpl.toString('utf8').split('\n').filter((l) => !l.includes('AARON ABRAHAM VILLA')).join('\n'));
  await syncLists({ dir, sources: ['us_bis_dpl', 'un_sc'], fetchFile: viaStandIn });
  const stopWatching = await screener.watchForUpdates(stack().databaseUrl);
  try {
    // Until the reload completes, screenings use the old version, whole.
    expect(screener.screen({ name: 'AARON ABRAHAM VILLA' }).listVersionIds).toEqual([first[0].id]);
    await sql`notify sanctions_lists_updated`.execute(testDb());
    await waitFor(async () => screener.versions.length === 2, { what: 'reload after NOTIFY' });
  } finally {
    await stopWatching();
  }
  const after = screener.screen({ name: 'AARON ABRAHAM VILLA' });
  expect(after.status).toBe('clear');
  expect(after.dataSourcesChecked).toBe(2);
  const dplVersion = screener.versions.find((v) => v.source === 'us_bis_dpl')!;
  expect(dplVersion.id).not.toBe(first[0].id);
  expect(dplVersion.entityCount).toBe(580);
  const recorded = await testDb().selectFrom('sanctions_list_versions').selectAll().where('source', '=', 'us_bis_dpl').execute();
  expect(recorded.length).toBeGreaterThanOrEqual(2);
  fs.rmSync(dir, { recursive: true, force: true });
});
