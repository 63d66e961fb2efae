import { createHmac } from 'node:crypto';
import { isPublicAddress, liveUrlProblem, publicOnlyLookup } from '../../src/webhooks/addresses';
import { postWebhook } from '../../src/webhooks/http';
import { idleWaitMs, retryDelayMs, webhookSignature } from '../../src/webhooks/delivery';

describe('which addresses a live webhook may reach (addresses alone, no traffic)', () => {
  test.each([
    ['127.0.0.1'], ['127.255.0.9'], ['10.0.0.1'], ['172.16.5.4'], ['192.168.1.1'], ['169.254.169.254'], ['100.64.0.1'],
    ['0.0.0.0'], ['224.0.0.1'], ['255.255.255.255'], ['::1'], ['::'], ['fe80::1'], ['fc00::1'], ['fd12:3456::1'], ['::ffff:127.0.0.1'],
    ['::ffff:10.0.0.1'], ['not an address'],
    // IPv4-compatible (::a.b.c.d), NAT64 (well-known and local-use prefixes), 6to4 and Teredo embeddings.
    ['::127.0.0.1'], ['::7f00:1'], ['::a9fe:a9fe'], ['::8.8.8.8'], ['64:ff9b::7f00:1'], ['64:ff9b::808:808'], ['64:ff9b:1::a9fe:a9fe'],
    ['2002:7f00:1::'], ['2002:a9fe:a9fe::1'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2'], ['::ffff:0:7f00:1'], ['100::1'], ['2001:db8::1'],
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  test.each([['8.8.8.8'], ['93.184.216.34'], ['2606:2800:220:1:248:1893:25c8:1946'], ['::ffff:8.8.4.4']])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  test.each([
    ['https://[::127.0.0.1]/h'], ['https://[::a9fe:a9fe]/h'], ['https://[::ffff:127.0.0.1]/h'], ['https://[64:ff9b::127.0.0.1]/h'],
    ['https://[2002:7f00:1::]/h'], ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/h'], ['https://localhost./h'], ['https://LocalHost/h'],
    ['https://LOCALHOST.../h'], ['https://api.localhost./h'], ['https://printer.local/h'], ['https://metadata.google.internal./h'],
    ['https://router.home.arpa/h'], ['https://intranet/h'], ['https://127.0.0.1./h'], ['https://0x7f.1/h'], ['https://2130706433/h'],
    ['https://169.254.169.254/h'], ['https://[fd00::1]/h'],
  ])('the live webhook URL %s is refused', (url) => {
    expect(liveUrlProblem(new URL(url))).toMatch(/public address/);
  });

  test.each([['https://hooks.example.com/h'], ['https://Hooks.Example.COM./h'], ['https://8.8.8.8/h'], ['https://[2606:4700::1111]/h']])('the live webhook URL %s is allowed', (url) => {
    expect(liveUrlProblem(new URL(url))).toBeUndefined();
  });

  test('a live post to a written non-public address (stored before a rule tightened) is refused without connecting', async () => {
    for (const url of ['https://[::7f00:1]:1/hooks', 'https://[64:ff9b::7f00:1]:1/hooks', 'https://127.0.0.1:1/hooks']) {
      const outcome = await postWebhook(url, '{}', {}, { timeoutMs: 2_000, publicOnly: true });
      expect(outcome.statusCode).toBeUndefined();
      expect(outcome.error).toMatch(/^EADDRNOTPUBLIC: .* is not a public address: refused$/);
    }
  });

  test('a name that resolves to loopback is refused when it is resolved, so nothing connects', async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup('localhost', {}, (e) => resolve(e)));
    expect(err?.code).toBe('EADDRNOTPUBLIC');
    expect(err?.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), not a public address: refused$/);
  });

  test('a live post to a name that resolves to loopback fails before any connection', async () => {
    const outcome = await postWebhook('https://localhost:1/hooks', '{}', {}, { timeoutMs: 2_000, publicOnly: true });
    expect(outcome.statusCode).toBeUndefined();
    expect(outcome.error).toMatch(/^EADDRNOTPUBLIC: localhost resolves to/);
  });
});

describe('signature and retry schedule', () => {
  test('the signature is the lowercase hex HMAC-SHA256 of the body with each secret, comma-separated', () => {
    const body = '{"id":"evt_1"}';
    const one = createHmac('sha256', 'whsec_a').update(body).digest('hex');
    const two = createHmac('sha256', 'whsec_b').update(body).digest('hex');
    expect(webhookSignature(['whsec_a'], body)).toBe(one);
    expect(webhookSignature(['whsec_a', 'whsec_b'], body)).toBe(`${one},${two}`);
  });

  test('retries back off exponentially with ±20 % jitter, up to an hour', () => {
    expect(retryDelayMs(1, 30_000, () => 0.5)).toBe(30_000);
    expect(retryDelayMs(2, 30_000, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(5, 30_000, () => 0.5)).toBe(480_000);
    expect(retryDelayMs(30, 30_000, () => 0.5)).toBe(3_600_000);
    expect(retryDelayMs(1, 30_000, () => 0)).toBe(24_000);
    expect(retryDelayMs(1, 30_000, () => 1)).toBe(36_000);
    // Three days of retries from a 30 s start: about 75 attempts, the last ones an hour apart.
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < 72 * 3600_000) elapsed += retryDelayMs(++attempts, 30_000, () => 0.5);
    expect(attempts).toBeGreaterThan(70);
    expect(attempts).toBeLessThan(80);
  });
});

test('a quiet endpoint is looked at after pollMs, then twice as long each quiet look, up to the idle ceiling', () => {
  expect([0, 1, 2, 3, 4, 5, 6, 100].map((n) => idleWaitMs(n, 500, 2_000))).toEqual([500, 500, 1_000, 2_000, 2_000, 2_000, 2_000, 2_000]);
  expect([1, 2, 3, 4, 5].map((n) => idleWaitMs(n, 100, 1_000))).toEqual([100, 200, 400, 800, 1_000]);
  // A ceiling below pollMs never shortens the wait.
  expect(idleWaitMs(3, 500, 100)).toBe(500);
});
