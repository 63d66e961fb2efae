import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadReferenceEntities } from '../../bench/reference-lists';
import { SanctionsMatcher } from '../../src/sanctions/matcher';
import { normalizeName } from '../../src/sanctions/normalize';
import type { ListedEntity } from '../../src/sanctions/types';

// The matcher on the real lists (pure logic, in process).

let entities: ListedEntity[];
let matcher: SanctionsMatcher;
beforeAll(async () => {
  entities = await loadReferenceEntities();
  matcher = new SanctionsMatcher(entities, { threshold: 0.8, maxMatches: 10 });
});

const top = (name: string, extra: Record<string, unknown> = {}) => matcher.screen({ name, ...extra })[0];

describe('normalisation', () => {
  test.each([
    ['Dr. José  María O\u2019Neil', 'individual', ['jose', 'maria', 'oneil']],
    ['Владимир Путин', 'individual', ['vladimir', 'putin']],
    ['ACME Trading Co., Ltd.', 'business', ['acme', 'trading']],
    ['OOO Romashka', 'business', ['romashka']],
    ['AAKHIRAHLIMITED', 'business', ['aakhirah']],
    ['72ND AUTOMOTIVE REPAIR PLANT', 'business', ['72nd', 'automotive', 'repair', 'plant']],
    ['Emma LLC', 'business', ['emma']],
  ] as const)('%s → %j', (raw, kind, tokens) => {
    expect(normalizeName(raw, kind).tokens).toEqual(tokens);
  });
});

describe('matching', () => {
  test('an exact listed name, with its listing details', () => {
    const m = top('Ayman al-Zawahiri', { type: 'individual' });
    expect(m.entity.source).toMatch(/us_ofac_sdn|un_sc/);
    expect(m.score).toBeGreaterThanOrEqual(0.95);
  });

  test('typos, transpositions, reordering, glued words and honorifics still match', () => {
    for (const name of ['Ayman al-Zawahiry', 'Ayman al-Zawhairi', 'al-Zawahiri Ayman', 'Ayman alZawahiri', 'Sheikh Ayman al-Zawahiri']) {
      expect(matcher.screen({ name, type: 'individual' }).some((m) => /ZAWAHIRI/i.test(m.matchedName))).toBe(true);
    }
  });

  test('a name in its original script matches its transliterated listing', () => {
    const listed = entities.find((e) => e.source === 'un_sc' && e.names.some((n) => n.kind === 'original_script' && /[\u0600-\u06ff]/.test(n.value)))!;
    const script = listed.names.find((n) => n.kind === 'original_script')!.value;
    const m = matcher.screen({ name: script, type: 'individual' });
    expect(m.map((x) => x.entity.id)).toContain(listed.id);
    expect(m.find((x) => x.entity.id === listed.id)!.matchType).toBe('transliterated');
  });

  test('a different birth year costs; the same birth date raises', () => {
    const listed = entities.find((e) => e.entityType === 'individual' && e.birthDates.some((d) => d.length === 10) && e.names[0].value.split(' ').length >= 3)!;
    const dob = listed.birthDates.find((d) => d.length === 10)!;
    const name = listed.names[0].value;
    const plain = matcher.screen({ name, type: 'individual' }).find((m) => m.entity.id === listed.id)!;
    const same = matcher.screen({ name, type: 'individual', dateOfBirth: dob }).find((m) => m.entity.id === listed.id)!;
    const otherYear = `${Number(dob.slice(0, 4)) - 12}${dob.slice(4)}`;
    const different = matcher.screen({ name, type: 'individual', dateOfBirth: otherYear }).find((m) => m.entity.id === listed.id);
    expect(same.score).toBeGreaterThan(plain.score - 0.0001);
    expect(same.adjustments.dateOfBirth).toBeGreaterThan(0);
    expect(different === undefined || different.score < plain.score).toBe(true);
  });

  test('an identical name with a matching birth date outranks one without', () => {
    // Two listings share a name; only one has the screened birth date.
    const a: ListedEntity = { id: 't:a', source: 't', entityType: 'individual', names: [{ value: 'Ivan Petrovich Sidorov', kind: 'primary' }], birthDates: ['1970-02-03'], countries: [], programs: [], cryptoAddresses: [] };
    const b: ListedEntity = { ...a, id: 't:b', birthDates: [] };
    const m = new SanctionsMatcher([b, a], { threshold: 0.85, maxMatches: 10 }).screen({ name: 'Ivan Petrovich Sidorov', dateOfBirth: '1970-02-03' });
    expect(m.map((x) => x.entity.id)).toEqual(['t:a', 't:b']);
    expect(m[0].score).toBeGreaterThan(m[1].score);
  });

  test('entity type filters: a person is not screened against companies', () => {
    const company = entities.find((e) => e.entityType === 'business' && e.names[0].value.length > 12)!;
    expect(matcher.screen({ name: company.names[0].value, type: 'business' }).map((m) => m.entity.id)).toContain(company.id);
    expect(matcher.screen({ name: company.names[0].value, type: 'individual' }).map((m) => m.entity.id)).not.toContain(company.id);
  });

  test('no 100 % for unrelated names sharing one word (watchman: "EMMA LLC" vs "emma daniels")', () => {
    const m = new SanctionsMatcher(
      [{ id: 't:emma', source: 't', entityType: 'business', names: [{ value: 'EMMA LLC', kind: 'primary' }], birthDates: [], countries: [], programs: [], cryptoAddresses: [] }],
      { threshold: 0.5, maxMatches: 10 },
    );
    const r = m.screen({ name: 'emma daniels' });
    expect(r.length === 0 || r[0].score < 0.85).toBe(true);
  });

  test('digits count: a different unit number is a different name', () => {
    const r = matcher.screen({ name: '72ND AUTOMOTIVE AND ARMORED VEHICLE REPAIR PLANT', type: 'business' });
    expect(r[0].matchedName).toMatch(/^72ND /);
    const other = r.find((m) => /^71ST /.test(m.matchedName));
    expect(other === undefined || other.score < r[0].score - 0.05).toBe(true);
  });

  test('at most 10 matches, best first', () => {
    const r = matcher.screen({ name: 'Mohammed Ali' });
    expect(r.length).toBeLessThanOrEqual(10);
    for (let i = 1; i < r.length; i++) expect(r[i - 1].score).toBeGreaterThanOrEqual(r[i].score);
  });
});

test('quality on the evaluation set: recall ≥ 0.98 and ≤ 5 false positives per 1,000 clean names', () => {
  // 1,000 distorted listed names and 5,000 clean people, screened in a process of its own.
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(__dirname, '../harness/screening-quality.ts')], { encoding: 'utf8', timeout: 80_000 });
  expect(run.stderr).toBe('');
  const quality = JSON.parse(run.stdout) as { positives: number; found: number; negatives: number; falsePositives: number };
  expect(quality).toMatchObject({ positives: 1000, negatives: 5000 });
  expect(quality.found / quality.positives).toBeGreaterThanOrEqual(0.98);
  expect((quality.falsePositives / quality.negatives) * 1000).toBeLessThanOrEqual(5);
});
