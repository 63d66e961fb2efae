import doubleMetaphone from 'talisman/phonetics/double-metaphone';
import { CandidateWeights } from './candidate-weights';
import { normalizeName } from './normalize';
import type { ListedEntity } from './types';

export type MatchType = 'name_exact' | 'name_fuzzy' | 'name_phonetic' | 'alias' | 'transliterated';

export interface ScreeningQuery {
  name: string;
  type?: 'individual' | 'business';
  /** YYYY-MM-DD */
  dateOfBirth?: string;
  /** ISO 3166-1 alpha-2 */
  country?: string;
}

export interface Match {
  entity: ListedEntity;
  score: number;
  nameScore: number;
  matchedName: string;
  matchType: MatchType;
  /** How birth date and country moved the name score. */
  adjustments: { dateOfBirth?: number; country?: number };
}

export interface MatcherOptions {
  threshold: number;
  maxMatches: number;
}

interface IndexedName {
  entity: number;
  value: string;
  tokens: string[];
  compact: string;
  phon: string[][];
  kind: 'primary' | 'alias' | 'original_script';
  weak: boolean;
  transliterated: boolean;
}

/** The share of the score a name alone can reach. */
const NAME_WEIGHT = 0.95;

/** Longer tokens (glued pairs of long names) are looked up exactly; their parts are fuzzy already. */
const MAX_FUZZY_TOKEN = 16;
/** How many candidate names are scored in full. */
const CANDIDATES = 150;
/** Postings visited per query token before common variants stop adding candidates. */
const POSTINGS_BUDGET = 4000;

/** Deletion neighbourhoods (SymSpell): every token within this edit distance is found, never missed. */
const maxEdits = (len: number) => (len >= 8 ? 2 : len >= 4 ? 1 : 0);

function deletes(token: string, edits: number, out: Set<string>) {
  if (edits === 0) return;
  for (let i = 0; i < token.length; i++) {
    const d = token.slice(0, i) + token.slice(i + 1);
    if (!out.has(d)) {
      out.add(d);
      deletes(d, edits - 1, out);
    }
  }
}

function phonetic(token: string): string[] {
  if (token.length < 3 || /\d/.test(token)) return [];
  const [a, b] = doubleMetaphone(token);
  return a === b ? [a] : [a, b];
}

let rowA = new Int32Array(64);
let rowB = new Int32Array(64);
let rowC = new Int32Array(64);

/**
 * Optimal string alignment distance: a transposition of neighbours costs one edit. With `limit`,
 * the answer is exact up to `limit` and anything above it once the distance is known to exceed it.
 */
export function osaDistance(a: string, b: string, limit = Infinity): number {
  if (a === b) return 0;
  const m = a.length;
  const n = b.length;
  if (m === 0) return n;
  if (n === 0) return m;
  if (n + 1 > rowA.length) {
    rowA = new Int32Array(n + 1);
    rowB = new Int32Array(n + 1);
    rowC = new Int32Array(n + 1);
  }
  let prev2 = rowA;
  let prev = rowB;
  let cur = rowC;
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= m; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return rowMin;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n];
}

const HAS_DIGIT = /\d/;

interface TokenMatch {
  sim: number;
  phonetic: boolean;
}

function tokenSimilarity(q: string, c: string, qPhon: string[], cPhon: string[]): TokenMatch {
  if (q === c) return { sim: 1, phonetic: false };
  // Numbers identify (the 72nd plant is not the 71st): tokens with digits match exactly or not at all.
  if (HAS_DIGIT.test(q) || HAS_DIGIT.test(c)) return { sim: 0, phonetic: false };
  // An initial stands for a name ("J Smith").
  if (q.length === 1 || c.length === 1) return { sim: q[0] === c[0] ? 0.75 : 0, phonetic: false };
  const longest = Math.max(q.length, c.length);
  // Lengths this far apart cannot reach the similarity that counts (0.5).
  if (Math.abs(q.length - c.length) * 2 > longest) return { sim: 0, phonetic: false };
  const edit = 1 - osaDistance(q, c, Math.floor(longest / 2)) / longest;
  const sameSound = qPhon.length > 0 && q[0] === c[0] && qPhon.some((p) => cPhon.includes(p));
  if (sameSound && edit < 0.85) return { sim: 0.85, phonetic: true };
  return { sim: edit, phonetic: false };
}

/**
 * An in-memory index of every listed name, and the scorer. Built once per list version and then
 * read-only, so a reload builds a new matcher and swaps it in atomically.
 */
export class SanctionsMatcher {
  private readonly names: IndexedName[] = [];
  private readonly postings = new Map<string, number[]>();
  /**
   * Deletion variant → the listed token(s) it comes from, as token numbers: a number when one token
   * (most variants), an array when several. Half a million entries; keeping them free of small arrays
   * keeps garbage collection cheap for the process that serves the API.
   */
  private readonly deletionIndex = new Map<string, number | number[]>();
  private readonly fuzzyTokenList: string[] = [];
  private readonly phoneticIndex = new Map<string, string[]>();
  private readonly phoneticCache = new Map<string, string[]>();
  private readonly similarCache = new Map<string, Set<string>>();
  /** Tokens as listed (not glued pairs): the ones reachable by edits and sound. */
  private readonly fuzzyTokens = new Set<string>();
  /** The candidates of the screening under way (reused: a screening runs start to end without a pause). */
  private readonly candidates: CandidateWeights;

  constructor(
    readonly entities: ListedEntity[],
    private readonly options: MatcherOptions,
  ) {
    entities.forEach((entity, e) => {
      const seen = new Set<string>();
      for (const name of entity.names) {
        const norm = normalizeName(name.value, entity.entityType === 'individual' ? 'individual' : 'business');
        const key = norm.tokens.join(' ');
        if (norm.tokens.length === 0 || seen.has(key)) continue;
        seen.add(key);
        const id = this.names.length;
        this.names.push({
          entity: e,
          value: name.value,
          tokens: norm.tokens,
          compact: norm.tokens.join(''),
          phon: norm.tokens.map((t) => phonetic(t)),
          kind: name.kind,
          weak: name.weak ?? false,
          transliterated: norm.transliterated,
        });
        for (const t of new Set(norm.tokens)) {
          this.addPosting(t, id);
          this.fuzzyTokens.add(t);
        }
        // Glued neighbours ("al qaida" ~ "alqaida") are indexed as exact tokens too.
        for (let i = 0; i + 1 < norm.tokens.length; i++) this.addPosting(norm.tokens[i] + norm.tokens[i + 1], id);
      }
    });
    for (const token of this.fuzzyTokens) {
      if (token.length > MAX_FUZZY_TOKEN) continue;
      const tokenNo = this.fuzzyTokenList.push(token) - 1;
      const variants = new Set<string>();
      deletes(token, maxEdits(token.length), variants);
      for (const v of variants) {
        const existing = this.deletionIndex.get(v);
        if (existing === undefined) this.deletionIndex.set(v, tokenNo);
        else if (typeof existing === 'number') this.deletionIndex.set(v, [existing, tokenNo]);
        else existing.push(tokenNo);
      }
      for (const p of phonetic(token)) push(this.phoneticIndex, p, token);
    }
    this.candidates = new CandidateWeights(this.names.length);
  }

  get nameCount() {
    return this.names.length;
  }

  private addPosting(token: string, nameId: number) {
    const list = this.postings.get(token);
    if (!list) this.postings.set(token, [nameId]);
    else if (list[list.length - 1] !== nameId) list.push(nameId);
  }

  private phon(token: string) {
    let p = this.phoneticCache.get(token);
    if (!p) {
      p = phonetic(token);
      if (this.phoneticCache.size < 200_000) this.phoneticCache.set(token, p);
    }
    return p;
  }

  /** Dictionary tokens within edit distance or phonetic reach of `token` (memoised: names repeat words). */
  private similarTokens(token: string): Set<string> {
    let found = this.similarCache.get(token);
    if (!found) {
      found = this.findSimilarTokens(token);
      if (this.similarCache.size > 50_000) this.similarCache.clear();
      this.similarCache.set(token, found);
    }
    return found;
  }

  private findSimilarTokens(token: string): Set<string> {
    const found = new Set<string>();
    if (this.postings.has(token)) found.add(token);
    const edits = token.length > MAX_FUZZY_TOKEN ? 0 : maxEdits(token.length);
    if (edits > 0) {
      const variants = new Set<string>([token]);
      deletes(token, edits, variants);
      for (const v of variants) {
        if (v !== token && this.postings.has(v)) found.add(v);
        const entry = this.deletionIndex.get(v);
        if (entry === undefined) continue;
        for (const tokenNo of typeof entry === 'number' ? [entry] : entry) {
          const t = this.fuzzyTokenList[tokenNo];
          const allowed = Math.max(edits, maxEdits(t.length));
          if (!found.has(t) && osaDistance(t, token, allowed) <= allowed) found.add(t);
        }
      }
    }
    // Sound-alikes: Double Metaphone keeps 4 sounds, so only tokens of similar length count.
    for (const p of this.phon(token)) {
      for (const t of this.phoneticIndex.get(p) ?? []) if (t[0] === token[0] && Math.abs(t.length - token.length) <= 2) found.add(t);
    }
    return found;
  }

  screen(query: ScreeningQuery): Match[] {
    const norm = normalizeName(query.name, query.type ?? 'any');
    if (norm.tokens.length === 0) return [];
    const qTokens = norm.tokens;
    // Candidate names, ranked by the rarity of what they share with the query: for each query token,
    // the rarest listed token within its reach counts once per name.
    const candidates = this.candidates;
    candidates.clear();
    const credit = (reachable: Iterable<string>) => {
      // Rarest first; very common variants of common names stop counting once the budget is spent
      // (names sharing them are still found through the query's other tokens).
      const lists = [...reachable]
        .map((t) => this.postings.get(t))
        .filter((l): l is number[] => l !== undefined)
        .sort((a, b) => a.length - b.length);
      let budget = POSTINGS_BUDGET;
      for (const list of lists) {
        if (budget <= 0) break;
        budget -= list.length;
        candidates.creditEach(list, Math.log(1 + this.names.length / list.length));
      }
      candidates.addTokenCredits();
    };
    for (const q of new Set(qTokens)) credit(this.similarTokens(q));
    // Glue: a query token may be two listed tokens, or two query tokens one listed token.
    credit(qTokens.filter((q) => this.postings.has(q) && !this.fuzzyTokens.has(q)));
    for (let i = 0; i + 1 < qTokens.length; i++) credit([qTokens[i] + qTokens[i + 1]]);
    const ranked = candidates.takeTop(CANDIDATES);

    const qPhon = qTokens.map((t) => this.phon(t));
    const qCompact = qTokens.join('');
    const memo = qTokens.map(() => new Map<string, TokenMatch>());
    const best = new Map<number, Match>();
    for (const nameId of ranked) {
      const n = this.names[nameId];
      const entity = this.entities[n.entity];
      if (!typeAllowed(query.type, entity.entityType)) continue;
      const scored = this.scoreName(qTokens, qPhon, qCompact, n, memo);
      if (NAME_WEIGHT * scored.score < this.options.threshold - 0.2) continue;
      let nameScore = scored.score;
      if (n.weak) nameScore *= 0.95;
      const adjustments = adjust(query, entity);
      // A name alone reaches at most 0.95; corroborating facts fill the rest, so an identical name
      // with the right birth date outranks the same name without one.
      const score = clamp(NAME_WEIGHT * nameScore + (adjustments.dateOfBirth ?? 0) + (adjustments.country ?? 0));
      const matchType: MatchType =
        norm.transliterated || n.kind === 'original_script' ? 'transliterated'
        : scored.exact ? (n.kind === 'alias' ? 'alias' : 'name_exact')
        : n.kind === 'alias' ? 'alias'
        : scored.phonetic ? 'name_phonetic'
        : 'name_fuzzy';
      const previous = best.get(n.entity);
      if (!previous || score > previous.score) {
        best.set(n.entity, { entity, score: round(score), nameScore: round(nameScore), matchedName: n.value, matchType, adjustments });
      }
    }
    return [...best.values()]
      .filter((m) => m.score >= this.options.threshold)
      .sort((a, b) => b.score - a.score || a.entity.id.localeCompare(b.entity.id))
      .slice(0, this.options.maxMatches);
  }

  /**
   * Token alignment: each query token pairs with its most similar listed token (greedy, each used
   * once). The score weighs how much of the query is explained (75 %) and how much of the listed
   * name (25 %), so a missing middle name costs little and an extra unrelated name costs more.
   * Glued or split tokens are caught by comparing the names without spaces.
   */
  /** Middle names of people count half: a screened name often leaves them out. */
  private listedWeight(n: IndexedName, j: number) {
    const middle = j > 0 && j < n.tokens.length - 1;
    return middle && this.entities[n.entity].entityType === 'individual' ? 0.5 : 1;
  }

  private scoreName(qTokens: string[], qPhon: string[][], qCompact: string, n: IndexedName, memo: Map<string, TokenMatch>[]) {
    const pairs: { i: number; j: number; sim: number; phonetic: boolean }[] = [];
    for (let i = 0; i < qTokens.length; i++) {
      for (let j = 0; j < n.tokens.length; j++) {
        let m = memo[i].get(n.tokens[j]);
        if (!m) {
          m = tokenSimilarity(qTokens[i], n.tokens[j], qPhon[i], n.phon[j]);
          memo[i].set(n.tokens[j], m);
        }
        if (m.sim >= 0.5) pairs.push({ i, j, sim: m.sim, phonetic: m.phonetic });
      }
    }
    pairs.sort((a, b) => b.sim - a.sim);
    const usedQ = new Set<number>();
    const usedC = new Set<number>();
    let matchedQ = 0;
    let matchedC = 0;
    let phoneticUsed = false;
    for (const p of pairs) {
      if (usedQ.has(p.i) || usedC.has(p.j)) continue;
      usedQ.add(p.i);
      usedC.add(p.j);
      matchedQ += p.sim * qTokens[p.i].length;
      matchedC += p.sim * n.tokens[p.j].length * this.listedWeight(n, p.j);
      phoneticUsed ||= p.phonetic;
    }
    const qLen = qTokens.reduce((s, t) => s + t.length, 0);
    const cLen = n.tokens.reduce((s, t, j) => s + t.length * this.listedWeight(n, j), 0);
    const tokenScore = 0.75 * (matchedQ / qLen) + 0.25 * (matchedC / cLen);
    // Names without spaces catch glued or split words; only worth it when the word counts differ
    // and the comparison could still beat the token score.
    let compactScore = 0;
    const longest = Math.max(qCompact.length, n.compact.length);
    if (qTokens.length !== n.tokens.length && longest > 0) {
      const floor = Math.max(tokenScore, this.options.threshold - 0.2);
      const maxEdits = Math.floor(longest * (1 - floor / 0.97));
      if (maxEdits >= 0 && Math.abs(qCompact.length - n.compact.length) <= maxEdits) {
        const d = osaDistance(qCompact, n.compact, maxEdits);
        if (d <= maxEdits) compactScore = 0.97 * (1 - d / longest);
      }
    }
    const exact = qTokens.length === n.tokens.length && usedQ.size === qTokens.length && matchedQ === qLen && matchedC === cLen;
    return { score: Math.max(tokenScore, compactScore), exact, phonetic: phoneticUsed && tokenScore >= compactScore };
  }
}

function push(map: Map<string, string[]>, key: string, value: string) {
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!list.includes(value)) list.push(value);
}

function typeAllowed(query: ScreeningQuery['type'], listed: ListedEntity['entityType']) {
  if (!query || listed === 'unknown') return true;
  return query === 'individual' ? listed === 'individual' : listed !== 'individual';
}

/**
 * Birth date and country move a name score: a different birth year costs, an identical date adds,
 * so an identical name with the right birth date outranks the same name without one.
 */
function adjust(query: ScreeningQuery, entity: ListedEntity) {
  const out: { dateOfBirth?: number; country?: number } = {};
  if (query.dateOfBirth && entity.birthDates.length > 0) {
    const qYear = Number(query.dateOfBirth.slice(0, 4));
    let bestDelta = -0.2;
    for (const d of entity.birthDates) {
      const year = Number(d.slice(0, 4));
      let delta: number;
      if (d === query.dateOfBirth) delta = 0.05;
      else if (year === qYear) delta = d.length === 4 ? 0.03 : query.dateOfBirth.startsWith(d) ? 0.04 : 0.01;
      else if (Math.abs(year - qYear) === 1) delta = -0.06;
      else delta = -0.2;
      bestDelta = Math.max(bestDelta, delta);
    }
    out.dateOfBirth = bestDelta;
  }
  if (query.country && entity.countries.length > 0) {
    out.country = entity.countries.includes(query.country.toUpperCase()) ? 0.02 : -0.04;
  }
  return out;
}

const clamp = (v: number) => Math.max(0, Math.min(1, v));
const round = (v: number) => Math.round(v * 1000) / 1000;
