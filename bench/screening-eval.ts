// Builds the screening evaluation from the real lists: positives are listed names with realistic
// distortions (seeded, reproducible); negatives are the 50,000 synthetic people. Shared by
// `npm run bench:screening` and the quality test.
import { countryToIso2 } from '../src/sanctions/countries';
import { normalizeName } from '../src/sanctions/normalize';
import type { ScreeningQuery } from '../src/sanctions/matcher';
import type { ListedEntity } from '../src/sanctions/types';

export const DISTORTIONS = [
  'exact', 'typo', 'transposition', 'dropped_token', 'reordered', 'glued', 'missing_middle_name', 'honorific',
  'case_and_accents', 'transliteration',
] as const;
export type Distortion = (typeof DISTORTIONS)[number];

export interface Positive {
  query: ScreeningQuery;
  expectedEntityId: string;
  distortion: Distortion;
}

/** Mulberry32: a small seeded PRNG so every run builds the same evaluation. */
export function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (name: string) => name.replace(/,/g, ' ').split(/\s+/).filter(Boolean);

function distort(name: string, d: Distortion, rnd: () => number, kind: 'individual' | 'business'): string | undefined {
  const w = words(name);
  const pick = (n: number) => Math.floor(rnd() * n);
  const long = w.map((t, i) => [t, i] as const).filter(([t]) => /^[A-Za-z]{5,}$/.test(t));
  switch (d) {
    case 'exact':
      return name;
    case 'typo': {
      if (long.length === 0) return undefined;
      const [t, i] = long[pick(long.length)];
      const at = 1 + pick(t.length - 2);
      const letters = 'abcdefghijklmnopqrstuvwxyz';
      const replacement = letters[(letters.indexOf(t[at].toLowerCase()) + 1 + pick(24)) % 26];
      w[i] = t.slice(0, at) + replacement + t.slice(at + 1);
      return w.join(' ');
    }
    case 'transposition': {
      if (long.length === 0) return undefined;
      const [t, i] = long[pick(long.length)];
      const at = 1 + pick(t.length - 3);
      w[i] = t.slice(0, at) + t[at + 1] + t[at] + t.slice(at + 2);
      return w.join(' ');
    }
    case 'dropped_token':
    case 'missing_middle_name': {
      // Drop one of at least three distinctive words (legal forms and titles do not count): a
      // dropped word must leave a name that still identifies someone.
      const distinctive = normalizeName(name, kind).tokens;
      if (distinctive.length < 3) return undefined;
      distinctive.splice(d === 'missing_middle_name' ? 1 + pick(distinctive.length - 2) : pick(distinctive.length), 1);
      return distinctive.join(' ');
    }
    case 'reordered':
      if (w.length < 2) return undefined;
      return [...w.slice(1), w[0]].join(' ');
    case 'glued': {
      if (w.length < 2) return undefined;
      const i = pick(w.length - 1);
      w.splice(i, 2, w[i] + w[i + 1]);
      return w.join(' ');
    }
    case 'honorific':
      return `${['Mr.', 'Dr.', 'Sheikh', 'General', 'Mrs.'][pick(5)]} ${name}`;
    case 'case_and_accents':
      return name.toLowerCase().replace(/e/, 'é').replace(/a/, 'á').replace(/o/, 'ö');
    default:
      return undefined;
  }
}

/** `count` positives spread over distortions; transliteration uses names listed in their original script. */
export function buildPositives(entities: ListedEntity[], count: number, seed = 42): Positive[] {
  const rnd = prng(seed);
  const people = entities.filter((e) => e.entityType === 'individual' || e.entityType === 'business');
  const withScript = entities.filter((e) => e.names.some((n) => n.kind === 'original_script'));
  const out: Positive[] = [];
  let attempts = 0;
  while (out.length < count && attempts < count * 20) {
    attempts++;
    const distortion = DISTORTIONS[out.length % DISTORTIONS.length];
    const pool = distortion === 'transliteration' ? withScript : people;
    const entity = pool[Math.floor(rnd() * pool.length)];
    const candidates = entity.names.filter((n) => !n.weak && (distortion === 'transliteration' ? n.kind === 'original_script' : n.kind !== 'original_script'));
    if (candidates.length === 0) continue;
    const listed = candidates[Math.floor(rnd() * candidates.length)].value;
    const kind = entity.entityType === 'individual' ? 'individual' : 'business';
    if (distortion === 'missing_middle_name' && kind !== 'individual') continue;
    const name = distortion === 'transliteration' ? listed : distort(listed, distortion, rnd, kind);
    if (!name || words(name).join('').length < 4) continue;
    const type = entity.entityType === 'individual' ? 'individual' : 'business';
    const dob = entity.birthDates.find((d) => d.length === 10) ?? (entity.birthDates[0] ? `${entity.birthDates[0].slice(0, 4)}-06-15` : undefined);
    out.push({
      query: {
        name,
        type,
        ...(type === 'individual' && dob && rnd() < 0.6 ? { dateOfBirth: dob } : {}),
        ...(entity.countries[0] && rnd() < 0.5 ? { country: entity.countries[0] } : {}),
      },
      expectedEntityId: entity.id,
      distortion,
    });
  }
  return out;
}

export function negativeQueries(negatives: { name: string; dateOfBirth: string; nationality: string }[]): ScreeningQuery[] {
  return negatives.map((n) => ({ name: n.name, type: 'individual' as const, dateOfBirth: n.dateOfBirth, country: countryToIso2(n.nationality) }));
}
