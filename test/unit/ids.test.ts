import { newId, randomBase62, secretBase62 } from '../../src/ids';

describe('ids and random strings', () => {
  test('ids carry their prefix, 30 base62 characters, and sort by creation time', () => {
    const earlier = newId('transfer', Date.UTC(2026, 0, 1));
    const later = newId('transfer', Date.UTC(2026, 0, 1, 0, 0, 1));
    expect(earlier).toMatch(/^tr_[0-9A-Za-z]{30}$/);
    expect(earlier < later).toBe(true);
  });

  test('100,000 ids drawn from the pooled random bytes are all distinct', () => {
    const ids = new Set(Array.from({ length: 100_000 }, () => newId('request')));
    expect(ids.size).toBe(100_000);
  });

  test.each([
    ['randomBase62', randomBase62],
    ['secretBase62', secretBase62],
  ])('%s gives every base62 character about equally often (no modulo bias)', (_name, draw) => {
    const counts = new Map<string, number>();
    const text = Array.from({ length: 2_000 }, () => draw(31)).join('');
    for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = text.length / 62;
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 61 degrees of freedom: above 110 happens by chance about once in 10,000 runs; a biased
    // mapping (byte % 62 over all 256 values) scores in the hundreds at this sample size.
    expect(chiSquare).toBeLessThan(110);
  });
});
