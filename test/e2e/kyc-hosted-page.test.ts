import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { createTenant, individual, pngBytes, stack, testDb, waitForKycStatus, type Tenant } from '../harness';

// The hosted KYC page in a real browser: Debian's Chromium driven by playwright-core.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let browser: Browser;
let t: Tenant;
let dir: string;

beforeAll(async () => {
  t = await createTenant();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kyc-page-'));
  fs.writeFileSync(path.join(dir, 'passport.png'), pngBytes(64, 40, [30, 60, 160]));
  fs.writeFileSync(path.join(dir, 'selfie.png'), pngBytes(40, 40, [210, 170, 140]));
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'not an image');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an end user completes KYC through the kyc_link, without an API key', async () => {
  const customer = (await t.api.post('/v0/customers', individual())).body;
  const page = await browser.newPage();
  await page.goto(customer.kyc_link);
  await page.locator('#status[data-kyc-status="not_started"]').waitFor({ timeout: 20_000 });
  await page.selectOption('#document_type', 'drivers_license');
  await page.setInputFiles('#document_front', path.join(dir, 'passport.png'));
  await page.setInputFiles('#selfie', path.join(dir, 'selfie.png'));
  await page.click('#submit');
  await page.locator('#status[data-kyc-status="approved"]').waitFor({ timeout: 30_000 });
  expect(await page.textContent('#status')).toContain('Your identity is verified');
  expect(await page.isVisible('#kyc-form')).toBe(false);
  // The page shows no personal data.
  expect(await page.content()).not.toContain(customer.email);
  await page.close();

  const approved = await waitForKycStatus(t.api, customer.id, 'approved');
  expect(approved.endorsements).toContain('can_ach_transfer');
  const sub = await t.api.get(`/v0/events?object_id=${customer.id}&type=customer.kyc_status_changed`);
  expect(sub.body.data.length).toBe(3);
});

test('a file that is not an image is refused on the page with the reason', async () => {
  const customer = (await t.api.post('/v0/customers', individual())).body;
  const page = await browser.newPage();
  await page.goto(customer.kyc_link);
  await page.locator('#status[data-kyc-status="not_started"]').waitFor({ timeout: 20_000 });
  await page.setInputFiles('#document_front', path.join(dir, 'notes.txt'));
  await page.setInputFiles('#selfie', path.join(dir, 'selfie.png'));
  await page.click('#submit');
  await page.locator('#error', { hasText: 'document_front' }).waitFor({ timeout: 10_000 });
  expect((await t.api.get(`/v0/customers/${customer.id}`)).body.kyc_status).toBe('not_started');
  await page.close();
});

test('an unknown or expired link shows a 404 page; the token reaches only its own customer', async () => {
  const res = await fetch(`${stack().apiUrl}/kyc/${'A'.repeat(43)}`);
  expect(res.status).toBe(404);
  expect(await res.text()).toContain('invalid or has expired');
  const status = await fetch(`${stack().apiUrl}/kyc/${'A'.repeat(43)}/status`);
  expect(status.status).toBe(404);
  expect((await status.json()).error.code).toBe('not_found');

  const customer = (await t.api.post('/v0/customers', individual())).body;
  const own = await fetch(`${customer.kyc_link}/status`);
  expect(await own.json()).toEqual({ kyc_status: expect.any(String), customer_type: 'individual' });
  // An expired link stops working.
  const expiring = (await t.api.post('/v0/customers', individual())).body;
  await testDb().updateTable('customers').set({ kyc_link_expires_at: new Date(Date.now() - 1000) }).where('id', '=', expiring.id).execute();
  expect((await fetch(expiring.kyc_link)).status).toBe(404);
  expect((await fetch(`${expiring.kyc_link}/submit`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status).toBe(404);
  // A deleted customer's link stops working.
  await t.api.delete(`/v0/customers/${customer.id}`);
  expect((await fetch(customer.kyc_link)).status).toBe(404);
});

test('the page is served with a strict Content-Security-Policy', async () => {
  const customer = (await t.api.post('/v0/customers', individual())).body;
  const res = await fetch(customer.kyc_link);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-/);
  expect(res.headers.get('cache-control')).toBe('no-store');
});
