import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { snapshotFile } from '../../bench/reference-lists';
import { SanctionsScreener, SHIPPED_SNAPSHOT_DIR } from '../../src/sanctions/screener';
import { createTenant, stack, testDb } from '../harness';
import { freePort, startProcess, stopProcess, waitUntilReady } from '../harness/stack';

// The sanctions-list snapshot shipped for a first start without internet (data/sanctions-snapshot):
// loaded only when the data directory holds no lists, dated, replaced by synced lists, and not
// enough for production to clear anybody once older than SANCTIONS_SNAPSHOT_MAX_AGE_DAYS.

const emptyDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'no-lists-'));
const screener = (dataDir: string, snapshot?: { maxAgeDays: number }) =>
  new SanctionsScreener({ db: testDb(), dataDir, threshold: 0.8, snapshot: snapshot && { dir: SHIPPED_SNAPSHOT_DIR, maxAgeDays: snapshot.maxAgeDays } });

test('no lists in the data directory: the snapshot loads, dated by its lists; sandbox screens, production does not clear on it', async () => {
  const s = screener(emptyDir(), { maxAgeDays: 30 });
  const versions = await s.load();
  expect(versions.map((v) => [v.source, v.publishedOn]).sort()).toEqual([['un_sc', '2026-02-27'], ['us_ofac_cons', '2025-12-19'], ['us_ofac_sdn', '2024-05-03']]);
  expect(s.snapshot).toMatchObject({ oldestList: '2024-05-03' });
  expect(s.snapshot!.ageDays).toBeGreaterThan(30);
  expect(s.snapshotWarning()).toMatch(/shipped snapshot is loaded; its oldest list was published 2024-05-03, \d+ days ago/);
  expect(s.screen({ name: 'BANCO NACIONAL DE CUBA' }).status).toBe('potential_match');
  expect(s.screen({ name: 'Jane Doe' }).status).toBe('clear');
  expect([s.readyFor('sandbox'), s.readyFor('production')]).toEqual([true, false]);
  expect(s.unavailableReason('production')).toMatch(/shipped snapshot, its oldest list \d+ days old \(production allows 30\): run `npm run cli -- lists sync`/);

  // A younger snapshot (or a larger allowance) is fit for production.
  const lenient = screener(emptyDir(), { maxAgeDays: 3650 });
  await lenient.load();
  expect(lenient.readyFor('production')).toBe(true);
}, 60_000);

test('synced lists take the snapshot\'s place; SANCTIONS_SNAPSHOT=off loads none', async () => {
  const dir = emptyDir();
  fs.mkdirSync(path.join(dir, 'un_sc'));
  fs.writeFileSync(path.join(dir, 'un_sc', 'consolidated.xml'), snapshotFile('un_sc/consolidated.xml'));
  const synced = screener(dir, { maxAgeDays: 30 });
  expect((await synced.load()).map((v) => v.source)).toEqual(['un_sc']);
  expect([synced.snapshot, synced.readyFor('production')]).toEqual([undefined, true]);

  const off = screener(emptyDir());
  await off.load();
  expect([off.ready, off.readyFor('sandbox')]).toEqual([false, false]);
}, 60_000);

describe('an API process with no lists but the snapshot', () => {
  let api: ChildProcess;
  let url: string;
  beforeAll(async () => {
    url = `http://127.0.0.1:${await freePort()}`;
    api = startProcess('api-snapshot', path.join(__dirname, '../../src/main/api.ts'), {
      ...stack().processEnv, PORT: url.split(':').pop(), SANCTIONS_DATA_DIR: emptyDir(),
    }, stack().logDir);
    await waitUntilReady(`${url}/readyz`, api, 60_000);
  }, 90_000);
  afterAll(async () => {
    if (api) await stopProcess(api);
  });

  test('sandbox screens on it; production answers 503 saying why; /readyz warns', async () => {
    const t = await createTenant();
    const screen = (key: string, name: string) => fetch(`${url}/v0/sanctions/screen`, {
      method: 'POST', headers: { 'Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ name }),
    });
    const listed = await screen(t.secret, 'BANCO NACIONAL DE CUBA');
    expect([listed.status, (await listed.json()).status]).toEqual([200, 'potential_match']);
    expect((await (await screen(t.secret, 'Jane Doe')).json()).status).toBe('clear');
    const production = await screen(t.liveSecret, 'Jane Doe');
    expect(production.status).toBe(503);
    expect((await production.json()).error.message).toMatch(/shipped snapshot.*production allows 30.*lists sync/);
    expect(await testDb().selectFrom('screenings').select('id').where('developer_id', '=', t.developerId).where('environment', '=', 'production').execute()).toEqual([]);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).status.sanctions).toMatch(/the shipped snapshot is loaded; its oldest list was published 2024-05-03/);
  });
});
